"""A TLS endpoint on loopback in front of a plain one, with the throwaway test certificate."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

TLS_DIR = Path(__file__).resolve().parents[1] / "engine" / "http" / "tls"
CERTIFICATE = TLS_DIR / "localhost.pem"  # for localhost and 127.0.0.1; trust it via SSL_CERT_FILE


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def tls_in_front_of(port: int) -> AsyncIterator[int]:
    """A TLS endpoint on loopback that forwards, in plain text, to `port`; yields its port."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(CERTIFICATE, TLS_DIR / "localhost.key")

    async def forward(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))

    server = await asyncio.start_server(forward, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
