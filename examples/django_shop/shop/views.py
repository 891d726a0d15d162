"""Placing an order: the order row and its receipt job commit together, or neither does."""

import json

from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from shop.jobs import send_receipt
from shop.models import Order


def place(email: str, total_cents: int) -> Order:
    """One transaction: the order and the job that mails its receipt (commit is the enqueue)."""
    with transaction.atomic():
        order = Order.objects.create(email=email, total_cents=total_cents)
        send_receipt.enqueue_sync({"order_id": order.pk})  # joins the atomic block
        return order


@csrf_exempt
@require_POST
def place_order(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    order = place(body["email"], int(body["total_cents"]))
    return JsonResponse({"order_id": order.pk}, status=201)
