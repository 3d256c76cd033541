"""The Prometheus metrics of ``recalld serve`` (``/metrics``): requests and latency by
route template, memories by namespace and the background queue's depth."""

from __future__ import annotations

import time
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld.adapters.http_head import HEAD_ASKED
from recalld.adapters.http_paths import route_label
from recalld.service import MemoryService

__all__ = ["RequestMetrics", "StoreCollector"]


class RequestMetrics:
    """Count requests and time them by method, route template and status."""

    def __init__(self, app: ASGIApp, registry: CollectorRegistry) -> None:
        self.app = app
        self.requests = Counter(
            "recalld_http_requests",
            "HTTP requests served",
            ["method", "route", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "recalld_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            registry=registry,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = scope.get("route")
            template = route_label(str(getattr(route, "path", "unmatched")))
            method = "HEAD" if scope.get(HEAD_ASKED) else str(scope.get("method", ""))
            self.latency.labels(method, template).observe(time.perf_counter() - started)
            self.requests.labels(method, template, str(status)).inc()


class StoreCollector(Collector):
    """Memory counts by namespace and the background queue depth, read at scrape time."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    def collect(self) -> Iterable[Metric]:
        """Yield the gauges (read-only: a scrape changes nothing)."""
        memories = GaugeMetricFamily(
            "recalld_memories", "live memories by namespace", labels=["namespace"]
        )
        namespaces = self.service.namespaces()
        if namespaces:
            for namespace, count in self.service.stats(namespaces).by_namespace.items():
                memories.add_metric([namespace], count)
        yield memories
        status = self.service.status(namespaces)
        depth = status.queue.get("queued", 0) + status.queue.get("running", 0)
        yield GaugeMetricFamily(
            "recalld_queue_depth", "jobs waiting in the background queue", value=depth
        )
