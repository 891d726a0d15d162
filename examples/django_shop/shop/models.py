from django.db import models


class Order(models.Model):
    """An order; ``receipt_sent`` is set by the send_receipt job."""

    email = models.EmailField()
    total_cents = models.PositiveIntegerField()
    receipt_sent = models.BooleanField(default=False)


class DailyReport(models.Model):
    """One row per day the nightly task reported."""

    day = models.DateField(unique=True)
    orders = models.PositiveIntegerField()
