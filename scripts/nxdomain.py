#!/usr/bin/env python3
"""A DNS server that knows no name: every query gets NXDOMAIN ("no such host").

    nxdomain.py ADDRESS...

Serves UDP port 53 on each ADDRESS until killed. scripts/offline.sh runs it in the tests' network
namespace on the addresses of the machine's resolv.conf, so that a name lookup there fails as a
resolver that does not know the name makes it fail, without leaving the machine.
"""
import selectors
import socket
import sys


def answer(query: bytes) -> bytes | None:
    """The NXDOMAIN response to a query: its ID and question, QR and RA set, RCODE 3."""
    if len(query) < 12 or query[2] & 0x80:
        return None
    flags = 0x8000 | (query[2] & 0x79) << 8 | 0x0080 | 3  # QR, opcode and RD kept, RA, NXDOMAIN
    if (query[2] >> 3) & 0xF:  # not a standard query: NOTIMP
        flags = (flags & ~0xF) | 4
    qdcount = int.from_bytes(query[4:6], "big")
    # The question section: QNAME labels, then QTYPE and QCLASS (copied when there is exactly one).
    end = 12
    if qdcount == 1:
        while end < len(query) and query[end] != 0:
            end += 1 + query[end]
        end += 5
        if end > len(query):
            return None
    else:
        qdcount = 0
    return query[:2] + flags.to_bytes(2, "big") + qdcount.to_bytes(2, "big") + bytes(6) + query[12:end]


def main() -> None:
    sel = selectors.DefaultSelector()
    for addr in sys.argv[1:]:
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.bind((addr, 53))
        sel.register(s, selectors.EVENT_READ)
    print("serving", flush=True)
    while True:
        for key, _ in sel.select():
            data, peer = key.fileobj.recvfrom(4096)
            reply = answer(data)
            if reply is not None:
                key.fileobj.sendto(reply, peer)


if __name__ == "__main__":
    main()
