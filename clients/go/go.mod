module pipewright/clients/go

go 1.13

require (
	golang.org/x/oauth2 v0.0.0-20190604053449-0f29369cfe45
)
