"""The ferry operator: DurableJob and ScheduledTask custom resources → worker and scheduler
Deployments. Pure manifest builders carry the logic; ``handlers`` is the thin Kopf layer."""
