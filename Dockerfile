# The weir binary in a small image; the binary is the entrypoint, so
#   docker run IMAGE jobmanager ...   and   docker run IMAGE taskmanager ...
# run the two roles of a cluster. Build from the repository's root:
#   docker build -t weir:latest .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The image runs on Kubernetes: it carries the Kubernetes HA backend
# (--ha kubernetes), which a plain go build leaves out.
RUN CGO_ENABLED=0 go build -tags kubernetes -trimpath -buildvcs=false -o /out/weir ./cmd/weir

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/weir /usr/local/bin/weir
# REST API and RPC of a JobManager.
EXPOSE 8081 6123
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/weir"]
CMD ["--help"]
