// Smoke tests of the generated Go client (clients/go) against a live server.
//
// clients/scripts/smoke.sh starts the server and sets PIPEWRIGHT_URL (with /v0),
// PIPEWRIGHT_API_KEY and PIPEWRIGHT_CA_FILE (its self-signed certificate), then runs
// `go test` in GOPATH mode with the client as the package pipewright/clients/go.
// Each test builds its own projects, with names unique to the run.
package smoke

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	pw "pipewright/clients/go"
)

var run = fmt.Sprintf("%x", time.Now().UnixNano())

func unique(prefix string) string { return prefix + "-" + run }

// newClient points the client at the server, trusts its certificate and sends the API key.
func newClient(t *testing.T) (*pw.APIClient, context.Context) {
	t.Helper()
	pem, err := os.ReadFile(os.Getenv("PIPEWRIGHT_CA_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in PIPEWRIGHT_CA_FILE")
	}
	cfg := pw.NewConfiguration()
	cfg.Servers = pw.ServerConfigurations{{URL: os.Getenv("PIPEWRIGHT_URL")}}
	cfg.HTTPClient = &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
	}
	ctx := context.WithValue(context.Background(), pw.ContextAccessToken, os.Getenv("PIPEWRIGHT_API_KEY"))
	return pw.NewAPIClient(cfg), ctx
}

// errorCode is the `code` of the API's JSON error body.
func errorCode(t *testing.T, err error) string {
	t.Helper()
	var apiErr pw.GenericOpenAPIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("not an API error: %v", err)
	}
	body, ok := apiErr.Model().(pw.Error)
	if !ok {
		t.Fatalf("error body is not an Error: %s", apiErr.Body())
	}
	return body.Code
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		var apiErr pw.GenericOpenAPIError
		if errors.As(err, &apiErr) {
			t.Fatalf("%v: %s", err, apiErr.Body())
		}
		t.Fatal(err)
	}
}

// resources are a task with a code step, a pipeline running it, and a command with a parameter.
func resources() pw.ResourceSet {
	step := pw.NewTaskStep()
	step.SetLabel("Greet")
	step.SetCode(`echo "$GREETING, $PIPEWRIGHT_PROJECT_NAME"`)
	greet := pw.NewTaskSpec("task", 1, "greet", *pw.NewTaskData([]pw.TaskStep{*step}))
	hello := pw.NewPipelineSpec("pipeline", 1, "hello", *pw.NewPipelineData([]pw.PipelineTask{*pw.NewPipelineTask("greet")}))
	greeting := pw.NewCommandParameter("greeting", "string")
	greeting.SetEnvironment("GREETING")
	sayHello := pw.NewCommandSpec("command", 1, "say-hello", *pw.NewCommandData([]pw.CommandParameter{*greeting}, []string{"hello"}))
	return *pw.NewResourceSet([]pw.ResourceSpec{
		{ResourceSpecInterface: greet}, {ResourceSpecInterface: hello}, {ResourceSpecInterface: sayHello},
	})
}

func TestStatusAcceptsTheKey(t *testing.T) {
	client, ctx := newClient(t)
	status, _, err := client.StatusApi.GetStatus(ctx).Execute()
	must(t, err)
	if len(status) != 0 {
		t.Fatalf("status = %v, want {}", status)
	}
}

// TestExecutedCommand installs the resources in a new project, executes the command, and
// checks what follows from it: the pipeline, its event and its scratchpad.
func TestExecutedCommand(t *testing.T) {
	client, ctx := newClient(t)
	project, _, err := client.ProjectsApi.CreateProject(ctx).ProjectData(*pw.NewProjectData(unique("go-smoke"))).Execute()
	must(t, err)
	_, err = client.ResourcesApi.InstallResources(ctx, project.Id).ResourceSet(resources()).Execute()
	must(t, err)
	resource, _, err := client.ResourcesApi.GetResourceByTypeAndName(ctx, "command", "say-hello").XServiceProjectId(project.Id).Execute()
	must(t, err)
	invocation := pw.NewCommandInvocation()
	invocation.SetParameters(map[string]interface{}{"greeting": "Hello from Go"})
	execution, _, err := client.CommandsApi.ExecuteCommand(ctx, resource.Id).XServiceProjectId(project.Id).CommandInvocation(*invocation).Execute()
	must(t, err)
	if len(execution.PipelineIds) != 1 {
		t.Fatalf("pipelines = %v", execution.PipelineIds)
	}
	pipelineID := execution.PipelineIds[0]

	t.Run("resource specs read back typed by their type", func(t *testing.T) {
		command, ok := resource.Spec.ResourceSpecInterface.(*pw.CommandSpec)
		if !ok || command.Data.Pipelines[0] != "hello" {
			t.Fatalf("spec of say-hello = %#v", resource.Spec.ResourceSpecInterface)
		}
	})

	t.Run("the pipeline runs to success", func(t *testing.T) {
		pipeline, _, err := client.PipelinesApi.GetPipeline(ctx, pipelineID).XServiceProjectId(project.Id).Execute()
		must(t, err)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
			if s := pipeline.Status; s == pw.PIPELINESTATUS_SUCCESSFUL || s == pw.PIPELINESTATUS_FAILED || s == pw.PIPELINESTATUS_ABORTED {
				break
			}
			time.Sleep(200 * time.Millisecond)
			pipeline, _, err = client.PipelinesApi.GetPipeline(ctx, pipelineID).XServiceProjectId(project.Id).Execute()
			must(t, err)
		}
		if pipeline.Status != pw.PIPELINESTATUS_SUCCESSFUL {
			t.Fatalf("pipeline status = %s, want successful", pipeline.Status)
		}
		tasks, _, err := client.TasksApi.ListTasks(ctx).XServiceProjectId(project.Id).PipelineId(pipelineID).Execute()
		must(t, err)
		steps, _, err := client.TasksApi.ListStepExecutions(ctx, tasks.Elements[0].Id).XServiceProjectId(project.Id).Execute()
		must(t, err)
		if want := "Hello from Go, " + project.Name + "\n"; steps[0].Output != want {
			t.Fatalf("step output = %q, want %q", steps[0].Output, want)
		}
	})

	t.Run("a null field reads as unset", func(t *testing.T) {
		events, _, err := client.EventsApi.ListEvents(ctx).XServiceProjectId(project.Id).Execute()
		must(t, err)
		if event := events.Elements[0]; !event.OriginalEventId.IsSet() || event.OriginalEventId.Get() != nil {
			t.Fatalf("original_event_id = %v, want null", event.OriginalEventId.Get())
		}
	})

	t.Run("scratchpad entries are raw text both ways", func(t *testing.T) {
		for _, value := range []string{"1.4.0+20261125.3", `{"looks": "like JSON"}`, "42", "true", `"quoted"`, "two\nlines, ünïcödé ✓"} {
			_, err := client.ScratchpadApi.SetScratchpadEntry(ctx, pipelineID, "value").XServiceProjectId(project.Id).Body(value).Execute()
			must(t, err)
			got, _, err := client.ScratchpadApi.GetScratchpadEntry(ctx, pipelineID, "value").XServiceProjectId(project.Id).Execute()
			must(t, err)
			if got != value {
				t.Errorf("scratchpad entry = %q, want %q", got, value)
			}
		}
	})
}

func TestErrorsCarryTheirCode(t *testing.T) {
	client, ctx := newClient(t)
	name := unique("go-duplicate")
	_, _, err := client.ProjectsApi.CreateProject(ctx).ProjectData(*pw.NewProjectData(name)).Execute()
	must(t, err)
	_, _, err = client.ProjectsApi.CreateProject(ctx).ProjectData(*pw.NewProjectData(name)).Execute()
	if code := errorCode(t, err); code != "duplicate_project_name" {
		t.Fatalf("code = %s, want duplicate_project_name", code)
	}
	_, _, err = client.PipelinesApi.ListPipelines(ctx).XServiceProjectId("000000000000000000000000000").Execute()
	if code := errorCode(t, err); code != "unknown_project" {
		t.Fatalf("code = %s, want unknown_project", code)
	}
}

func TestNextCursorsWalkEveryProject(t *testing.T) {
	client, ctx := newClient(t)
	created := map[string]bool{}
	for i := 0; i < 3; i++ {
		project, _, err := client.ProjectsApi.CreateProject(ctx).ProjectData(*pw.NewProjectData(fmt.Sprintf("%s-%d", unique("go-page"), i))).Execute()
		must(t, err)
		created[project.Id] = true
	}
	seen := map[string]bool{}
	page, _, err := client.ProjectsApi.ListProjects(ctx).Size(2).Sort("name").Execute()
	must(t, err)
	for i := 0; i < 1000; i++ { // bounded: other tests' projects are on the same server
		for _, project := range page.Elements {
			if seen[project.Id] {
				t.Fatalf("project %s seen twice", project.Id)
			}
			seen[project.Id] = true
		}
		if page.Next == nil {
			break
		}
		next := page.Next
		page, _, err = client.ProjectsApi.ListProjects(ctx).After(next.GetAfter()).Size(next.Size).Sort(next.Sort).Order(next.Order).Execute()
		must(t, err)
	}
	for id := range created {
		if !seen[id] {
			t.Fatalf("project %s not walked", id)
		}
	}
}
