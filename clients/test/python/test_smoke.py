"""Smoke tests of the generated Python client (clients/python) against a live server.

clients/scripts/smoke.sh starts the server and sets PIPEWRIGHT_URL (with /v0),
PIPEWRIGHT_API_KEY and PIPEWRIGHT_CA_FILE (its self-signed certificate).
Each test builds its own projects, with names unique to the run.
"""

import json
import os
import time
import uuid

import pytest

import pipewright_client as pw
from pipewright_client.rest import ApiException

FINAL_STATUSES = {"successful", "failed", "aborted"}


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def error_code(error):
    """The `code` of an API error: the body is the API's JSON Error object."""
    return json.loads(error.body)["code"]


def set_raw_scratchpad_entry(scratchpad, project_id, pipeline_id, key, value):
    """Sends the value as UTF-8 bytes (clients/README.md explains why not a str)."""
    scratchpad.set_scratchpad_entry(project_id, pipeline_id, key, value.encode("utf-8"))


def get_raw_scratchpad_entry(scratchpad, project_id, pipeline_id, key):
    """The entry as the raw text the server sent (clients/README.md explains why not the plain call)."""
    response = scratchpad.get_scratchpad_entry(project_id, pipeline_id, key, _preload_content=False)
    return response.data.decode("utf-8")


@pytest.fixture(scope="module")
def client():
    configuration = pw.Configuration(host=os.environ["PIPEWRIGHT_URL"])
    configuration.access_token = os.environ["PIPEWRIGHT_API_KEY"]
    configuration.ssl_ca_cert = os.environ["PIPEWRIGHT_CA_FILE"]
    with pw.ApiClient(configuration) as api_client:
        yield api_client


def resources():
    """A task with a code step, a pipeline running it, and a command with a parameter."""
    greet = pw.TaskSpec(
        type="task",
        version=1,
        name="greet",
        data=pw.TaskData(
            steps=[pw.TaskStep(label="Greet", code='echo "$GREETING, $PIPEWRIGHT_PROJECT_NAME"')]
        ),
    )
    hello = pw.PipelineSpec(
        type="pipeline", version=1, name="hello", data=pw.PipelineData(tasks=[pw.PipelineTask(task="greet")])
    )
    say_hello = pw.CommandSpec(
        type="command",
        version=1,
        name="say-hello",
        data=pw.CommandData(
            parameters=[pw.CommandParameter(name="greeting", type="string", environment="GREETING")],
            pipelines=["hello"],
        ),
    )
    return pw.ResourceSet(specs=[greet, hello, say_hello])


@pytest.fixture(scope="module")
def pipeline(client):
    """Executes the command of a fresh project; returns (project, pipeline id)."""
    project = pw.ProjectsApi(client).create_project(pw.ProjectData(name=unique("py-smoke")))
    pw.ResourcesApi(client).install_resources(project.id, resources())
    command = pw.ResourcesApi(client).get_resource_by_type_and_name(project.id, "command", "say-hello")
    execution = pw.CommandsApi(client).execute_command(
        project.id, command.id, pw.CommandInvocation(parameters={"greeting": "Hello from Python"})
    )
    assert len(execution.pipeline_ids) == 1
    return project, execution.pipeline_ids[0]


def test_status_accepts_the_key(client):
    assert pw.StatusApi(client).get_status() == {}


def test_installed_resources_read_back_with_their_type_specific_data(client, pipeline):
    project, _ = pipeline
    page = pw.ResourcesApi(client).list_resources(project.id, sort="name")
    specs = {resource.spec.name: resource.spec for resource in page.elements}
    assert sorted(specs) == ["greet", "hello", "say-hello"]
    assert specs["say-hello"].type == "command"
    assert specs["say-hello"].data["pipelines"] == ["hello"]
    assert specs["greet"].data["steps"][0]["code"].startswith("echo")


def test_the_executed_command_runs_its_pipeline_to_success(client, pipeline):
    project, pipeline_id = pipeline
    pipelines = pw.PipelinesApi(client)
    deadline = time.monotonic() + 60
    status = pipelines.get_pipeline(project.id, pipeline_id).status
    while status not in FINAL_STATUSES and time.monotonic() < deadline:
        time.sleep(0.2)
        status = pipelines.get_pipeline(project.id, pipeline_id).status
    assert status == "successful"

    tasks = pw.TasksApi(client)
    (task,) = tasks.list_tasks(project.id, pipeline_id=pipeline_id).elements
    (step,) = tasks.list_step_executions(project.id, task.id)
    assert step.output == f"Hello from Python, {project.name}\n"


@pytest.mark.parametrize(
    "value",
    ["1.4.0+20261125.3", '{"looks": "like JSON"}', "42", "true", '"quoted"', "two\nlines, ünïcödé ✓", ""],
)
def test_scratchpad_entries_are_raw_text_both_ways(client, pipeline, value):
    project, pipeline_id = pipeline
    scratchpad = pw.ScratchpadApi(client)
    set_raw_scratchpad_entry(scratchpad, project.id, pipeline_id, "value", value)
    assert get_raw_scratchpad_entry(scratchpad, project.id, pipeline_id, "value") == value
    assert scratchpad.get_scratchpad(project.id, pipeline_id) == {"value": value}


def test_a_null_field_reads_as_none(client, pipeline):
    project, _ = pipeline
    (event,) = pw.EventsApi(client).list_events(project.id).elements
    assert (event.connector, event.original_event_id) == ("command", None)


def test_errors_carry_their_code(client, pipeline):
    project, _ = pipeline
    projects = pw.ProjectsApi(client)
    with pytest.raises(ApiException) as duplicate:
        projects.create_project(pw.ProjectData(name=project.name))
    assert (duplicate.value.status, error_code(duplicate.value)) == (409, "duplicate_project_name")

    with pytest.raises(ApiException) as unknown:
        pw.PipelinesApi(client).list_pipelines("0" * 27)
    assert (unknown.value.status, error_code(unknown.value)) == (404, "unknown_project")


def test_next_cursors_walk_every_project(client):
    projects = pw.ProjectsApi(client)
    prefix = unique("py-page")
    created = {projects.create_project(pw.ProjectData(name=f"{prefix}-{i}")).id for i in range(3)}

    seen = []
    page = projects.list_projects(size=2, sort="name")
    for _ in range(1000):  # bounded: other tests' projects are on the same server
        seen += [project.id for project in page.elements]
        if page.next is None:
            break
        cursor = page.next
        page = projects.list_projects(after=cursor.after, size=cursor.size, sort=cursor.sort, order=cursor.order)
    assert created <= set(seen)
    assert len(seen) == len(set(seen))
