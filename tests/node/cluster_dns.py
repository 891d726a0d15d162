"""The test cluster's DNS: Service names to ClusterIPs, nothing else, never forwarded.

A real cluster runs CoreDNS; in-cluster clients depend on it (Kopf reaches the API at
``https://kubernetes.default.svc``). This answers A queries for
``<service>.<namespace>.svc.<domain>`` from the API's Services, says "no such name" for other
names under the cluster domain and refuses everything else, so no lookup leaves the machine.
Plain DNS over UDP (RFC 1035), one question per query, as resolvers send.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

NOERROR, NXDOMAIN, REFUSED = 0, 3, 5
TYPE_A, CLASS_IN = 1, 1
TTL_S = 5


def parse_question(query: bytes) -> tuple[int, str, int, bytes]:
    """The query's id, name (lower case, no trailing dot), type and raw question section."""
    (query_id,) = struct.unpack_from("!H", query)
    labels, offset = [], 12
    while (length := query[offset]) != 0:
        labels.append(query[offset + 1 : offset + 1 + length].decode("ascii").lower())
        offset += 1 + length
    qtype = struct.unpack_from("!H", query, offset + 1)[0]
    return query_id, ".".join(labels), qtype, query[12 : offset + 5]


def answer(query: bytes, resolve: Callable[[str], str | None], domain: str) -> bytes:
    """The response to one query: an A record, an empty answer, NXDOMAIN or REFUSED."""
    query_id, name, qtype, question = parse_question(query)
    rcode, records = REFUSED, b""
    if name == domain or name.endswith(f".{domain}"):
        address = resolve(name)
        rcode = NOERROR if address else NXDOMAIN
        if address and qtype == TYPE_A:
            # 0xC00C: the name is the one in the question (a compression pointer to it).
            records = struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, TTL_S, 4)
            records += socket.inet_aton(address)
    flags = 0x8180 | rcode  # a response, recursion desired and available
    header = struct.pack("!HHHHHH", query_id, flags, 1, 1 if records else 0, 0, 0)
    return header + question + records


class ClusterDns:
    """A UDP DNS server on ``(host, 53)`` answering from ``services(namespace, name)``."""

    def __init__(
        self, host: str, services: Callable[[str, str], str | None], domain: str = "cluster.local"
    ) -> None:
        self.domain = domain
        self._services = services
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind((host, 53))
        self._socket.settimeout(0.5)  # so close() is noticed
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="cluster-dns", daemon=True)
        self._thread.start()

    def _resolve(self, name: str) -> str | None:
        parts = name.removesuffix(f".{self.domain}").split(".")
        if len(parts) == 3 and parts[2] == "svc":
            return self._services(parts[1], parts[0])
        return None

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                query, client = self._socket.recvfrom(512)
            except OSError:
                continue  # the timeout: look at _closed again
            with contextlib.suppress(Exception):  # a malformed query gets no answer
                self._socket.sendto(answer(query, self._resolve, self.domain), client)

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=5)
        self._socket.close()
