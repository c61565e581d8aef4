# outboxctl's container image: the static binary (CGO_ENABLED=0) on distroless/static, as a
# non-root user, with no shell and no package manager. It copies a binary built outside the
# image, the one `make build` writes (or a release archive's), so the image holds exactly
# the release's binary and building it needs no Go toolchain image:
#
#   make build && docker build -t outboxctl:dev .
#
# BASE=scratch (docker build --build-arg BASE=scratch .) gives an image of the binary alone;
# it then lacks the CA certificates that a TLS connection with sslmode=verify-full needs.
# docs/self-hosted.md runs it beside self-hosted Sentry's docker compose.
ARG BASE=gcr.io/distroless/static-debian12:nonroot
FROM ${BASE}
ARG BINARY=bin/outboxctl
COPY ${BINARY} /usr/local/bin/outboxctl
# distroless's nonroot user (65532); numeric, so it holds on scratch too, which has no
# /etc/passwd. outboxctl writes nothing but its output (and, on an archiving delete, the
# archive file --archive names: mount a volume writable by 65532 for it).
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/outboxctl"]
CMD ["--help"]
