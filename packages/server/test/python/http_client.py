#!/usr/bin/env python3
"""Sends requests with Python's standard http.client, as its users do, and prints the answers.

Reads a JSON object from standard input:
  {"base": "https://127.0.0.1:PORT", "ca": "CA FILE", "requests": [REQUEST, ...]}
where each REQUEST is
  {"method": "GET", "target": "/v0/status" or an absolute URL, "headers": [[NAME, VALUE], ...],
   "body": TEXT (sent with Content-Length) or "chunks": [TEXT, ...] (sent chunked),
   "host": false to send no Host header}
The requests go one after the other over one connection, which http.client opens again when
the server closed it. Prints a JSON array with, for each request,
  {"status": 200, "headers": [[NAME, VALUE], ...], "body": TEXT, "closed": true if the
   server closed the connection after this answer}.
"""

import http.client
import json
import ssl
import sys
import urllib.parse


def send(connection, request):
    connection.putrequest(
        request["method"],
        request["target"],
        skip_host=not request.get("host", True),
        skip_accept_encoding=True,
    )
    for name, value in request.get("headers", []):
        connection.putheader(name, value)
    if "chunks" in request:
        connection.putheader("Transfer-Encoding", "chunked")
        chunks = [chunk.encode() for chunk in request["chunks"]]
        connection.endheaders(message_body=iter(chunks), encode_chunked=True)
    elif "body" in request:
        body = request["body"].encode()
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(message_body=body)
    else:
        connection.endheaders()
    response = connection.getresponse()
    body = response.read().decode()
    return {
        "status": response.status,
        "headers": [[name, value] for name, value in response.getheaders()],
        "body": body,
        # http.client drops the socket of a response that ends its connection.
        "closed": connection.sock is None,
    }


def main():
    order = json.load(sys.stdin)
    base = urllib.parse.urlsplit(order["base"])
    context = ssl.create_default_context(cafile=order["ca"])
    connection = http.client.HTTPSConnection(base.hostname, base.port, context=context, timeout=20)
    try:
        answers = [send(connection, request) for request in order["requests"]]
    finally:
        connection.close()
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
