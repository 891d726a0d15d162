"""A real HTTP receiver on 127.0.0.1 that answers from a script and keeps what it got."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers each request with the next scripted ``(status, headers)``; 200 when the
    script is used up."""

    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def answer(self, *responses: int | tuple[int, dict[str, str]]) -> None:
        """Queue the next answers (a bare status has no extra headers)."""
        for response in responses:
            self.script.append(response if isinstance(response, tuple) else (response, {}))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        request_line, *lines = head.split("\r\n")
        headers = {}
        for line in lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.received.append(Received(request_line.split(" ")[1], headers, body))
        status, extra = self.script.pop(0) if self.script else (200, {})
        lines_out = [f"HTTP/1.1 {status} Scripted", "Content-Length: 0", "Connection: close"]
        lines_out += [f"{name}: {value}" for name, value in extra.items()]
        writer.write(("\r\n".join(lines_out) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        writer.close()
