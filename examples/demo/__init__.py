"""The demo app: an onboarding job with durable steps and a nightly digest task."""
