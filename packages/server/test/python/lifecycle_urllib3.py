#!/usr/bin/env python3
"""The whole life of a project through urllib3's connection pool alone, as an existing client
of the API does: every call is HTTPSConnectionPool.urlopen with an absolute URL, which urllib3
sends as an absolute-form request target (GET https://host:port/v0/status HTTP/1.1).

Usage: lifecycle_urllib3.py BASE_URL API_KEY CA_FILE
  BASE_URL is the server without /v0 (https://127.0.0.1:8443).
Creates a project, installs resources, executes a command and waits for its pipeline to
succeed, reads and writes the scratchpad, sends an event, replays it, and deletes the project.
Checks each answer (status, exact media type, content) and exits 1 at the first surprise;
prints a JSON summary on success.
"""

import json
import sys
import time
import urllib.parse
import uuid

import urllib3

BASE, API_KEY, CA_FILE = sys.argv[1:4]
ORIGIN = urllib.parse.urlsplit(BASE)
POOL = urllib3.HTTPSConnectionPool(
    ORIGIN.hostname, ORIGIN.port, ca_certs=CA_FILE, cert_reqs="CERT_REQUIRED", maxsize=1
)
CHECK_MARK = "\u2713"
WAIT_SECONDS = 60
calls = 0


class Surprise(Exception):
    pass


def call(method, path, expect, body=None, project=None, text=None):
    """One request to /v0 + path; returns the JSON answer (or the text of a text/plain one)."""
    global calls
    calls += 1
    headers = {"Authorization": f"Bearer {API_KEY}"}
    if project is not None:
        headers["X-Service-Project-Id"] = project
    payload = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        payload = json.dumps(body).encode()
    elif text is not None:
        headers["Content-Type"] = "text/plain; charset=utf-8"
        payload = text.encode()
    url = f"{BASE}/v0{path}"
    response = POOL.urlopen(method, url, body=payload, headers=headers, retries=False, redirect=False)
    content = response.data.decode()
    if response.status != expect:
        raise Surprise(f"{method} {url}: {response.status} instead of {expect}: {content}")
    if response.status == 204 or method == "HEAD":
        if content:
            raise Surprise(f"{method} {url}: a body with {response.status}: {content}")
        return None
    media_type = response.headers.get("Content-Type")
    if media_type == "text/plain; charset=utf-8":
        return content
    if media_type != "application/json":
        raise Surprise(f"{method} {url}: Content-Type {media_type!r}, not exactly application/json")
    return json.loads(content)


def expect_equal(what, actual, expected):
    if actual != expected:
        raise Surprise(f"{what}: {actual!r} instead of {expected!r}")


def wait_for_pipeline(project, pipeline_id):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        pipeline = call("GET", f"/pipelines/id/{pipeline_id}", 200, project=project)
        if pipeline["status"] in ("successful", "failed", "aborted"):
            return pipeline
        if time.monotonic() > deadline:
            raise Surprise(f"pipeline {pipeline_id} still {pipeline['status']} after {WAIT_SECONDS} s")
        time.sleep(0.05)


def pipeline_of_event(project, event_id):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        page = call("GET", "/pipelines?size=100", 200, project=project)
        found = [p for p in page["elements"] if p["event_id"] == event_id]
        if found:
            return found[0]
        if time.monotonic() > deadline:
            raise Surprise(f"no pipeline of event {event_id} after {WAIT_SECONDS} s")
        time.sleep(0.05)


# A step writes the scratchpad through the API with its task's key, under a key that is not
# ASCII: the path carries it percent-encoded.
STAMP = (
    'curl -sS --fail -X PUT -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" '
    '-H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" -H "Content-Type: text/plain" '
    '--data-binary "$VERSION" '
    '"$PIPEWRIGHT_API_URL/v0/pipelines/id/$PIPEWRIGHT_PIPELINE_ID/scratchpad/key/%E2%9C%93"'
)
SPECS = [
    {"type": "task", "version": 1, "name": "stamp", "data": {"steps": [{"code": STAMP}]}},
    {"type": "task", "version": 1, "name": "greet", "data": {"steps": [{"code": "echo pushed"}]}},
    {"type": "pipeline", "version": 1, "name": "release", "data": {"tasks": [{"task": "stamp"}]}},
    {"type": "pipeline", "version": 1, "name": "on-push", "data": {"tasks": [{"task": "greet"}]}},
    {
        "type": "command",
        "version": 1,
        "name": "release",
        "data": {
            "parameters": [{"name": "version", "type": "string", "environment": "VERSION"}],
            "pipelines": ["release"],
        },
    },
    {
        "type": "trigger",
        "version": 1,
        "name": "on-push",
        "data": {"connector": "custom", "event": "push", "pipelines": ["on-push"]},
    },
]


def lifecycle():
    expect_equal("GET /status", call("GET", "/status", 200), {})
    call("HEAD", "/status", 200)

    name = f"py-{uuid.uuid4().hex[:12]}"
    project = call("POST", "/projects", 201, body={"name": name})
    pid = project["id"]
    # The name's "-" percent-encoded is the same path.
    encoded = urllib.parse.quote(name, safe="").replace("-", "%2D")
    expect_equal("project by encoded name", call("GET", f"/projects/name/{encoded}", 200)["id"], pid)

    call("PUT", f"/projects/id/{pid}/resources", 204, body={"specs": SPECS})
    command = call("GET", "/resources/type/command/name/release", 200, project=pid)

    execution = call(
        "POST", f"/commands/id/{command['id']}/execute", 201, body={"parameters": {"version": "1.4.0"}}, project=pid
    )
    [pipeline_id] = execution["pipeline_ids"]
    expect_equal("release pipeline", wait_for_pipeline(pid, pipeline_id)["status"], "successful")

    scratchpad = f"/pipelines/id/{pipeline_id}/scratchpad"
    expect_equal("value the step wrote", call("GET", f"{scratchpad}/key/%E2%9C%93", 200, project=pid), "1.4.0")
    call("PUT", f"{scratchpad}/key/note", 204, text="caf\u00e9", project=pid)
    expect_equal(
        "scratchpad", call("GET", scratchpad, 200, project=pid), {CHECK_MARK: "1.4.0", "note": "caf\u00e9"}
    )
    call("DELETE", f"{scratchpad}/key/note", 204, project=pid)
    call("GET", f"{scratchpad}/key/note", 404, project=pid)

    [event] = call(
        "POST", "/events", 201, body={"connector": "custom", "name": "push", "data": {"branch": "main"}}, project=pid
    )
    pushed = pipeline_of_event(pid, event["id"])
    expect_equal("pipeline of the event", wait_for_pipeline(pid, pushed["id"])["status"], "successful")

    replayed = call("POST", f"/events/id/{event['id']}/replay", 201, project=pid)
    expect_equal("replayed event's original", replayed["original_event_id"], event["id"])
    again = pipeline_of_event(pid, replayed["id"])
    expect_equal("pipeline of the replay", wait_for_pipeline(pid, again["id"])["status"], "successful")
    events = call("GET", "/events?connector=custom&size=100", 200, project=pid)
    expect_equal("custom events", sorted(e["id"] for e in events["elements"]), sorted([event["id"], replayed["id"]]))

    call("DELETE", f"/projects/id/{pid}", 204)
    call("GET", f"/projects/id/{pid}", 404)
    return {"urllib3": urllib3.__version__, "calls": calls, "project": name}


def main():
    try:
        summary = lifecycle()
    except Surprise as surprise:
        print(f"lifecycle_urllib3.py: {surprise}", file=sys.stderr)
        sys.exit(1)
    json.dump(summary, sys.stdout)


if __name__ == "__main__":
    main()
