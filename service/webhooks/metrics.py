"""Delivery figures for ``/metrics``, read from Redis when scraped (every dispatcher replica
counts into the same per-shard hashes, so any API instance shows the whole picture)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from service.store import StoreError
from service.store.notify import LATENCY_BUCKETS, Notifications

__all__ = ["DeliveryMetrics"]


class DeliveryMetrics(Collector):
    """``referee_webhook_deliveries_{pending,delivered,retried,dead}`` and the latency from
    the event's commit to the receiver's 2xx (``referee_webhook_delivery_latency_seconds``)."""

    def __init__(self, notes: Notifications) -> None:
        self.notes = notes

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily | HistogramMetricFamily]:
        try:
            stats = self.notes.stats()
        except StoreError:
            return
        yield GaugeMetricFamily(
            "referee_webhook_deliveries_pending",
            "Webhook deliveries not yet delivered nor dead.",
            value=max(0.0, stats.get("pending", 0.0)),
        )
        for name, text in (
            ("delivered", "Webhook deliveries answered 2xx."),
            ("retried", "Webhook attempts that failed and were scheduled again."),
            ("dead", "Webhook deliveries given up (schedule over, 410, webhook gone)."),
        ):
            yield CounterMetricFamily(
                f"referee_webhook_deliveries_{name}", text, value=stats.get(name, 0.0)
            )
        cumulative = 0.0
        buckets: list[tuple[str, float]] = []
        for bound in LATENCY_BUCKETS:
            cumulative += stats.get(f"le_{bound}", 0.0)
            buckets.append((str(bound), cumulative))
        cumulative += stats.get("le_inf", 0.0)
        buckets.append(("+Inf", cumulative))
        yield HistogramMetricFamily(
            "referee_webhook_delivery_latency_seconds",
            "From the event's commit to the receiver's 2xx answer.",
            buckets=buckets,
            sum_value=stats.get("latency_sum", 0.0),
        )
