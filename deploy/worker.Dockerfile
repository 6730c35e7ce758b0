# A ralph worker's image (issue 37, docs/scale.md): ralph with its `temporal` extra, git, bubblewrap and util-linux
# for the sandbox, and the agent CLIs the loops run (Claude Code here; add the others the same way). Built from the
# project's own source:  docker build -f deploy/worker.Dockerfile -t ralph-worker .
FROM python:3.11-slim

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        git openssh-client ca-certificates bubblewrap util-linux nodejs npm \
    && rm -rf /var/lib/apt/lists/*
# the agent CLI, pinned as the project's tests pin it
RUN npm install -g @anthropic-ai/claude-code@2.1.329 && npm cache clean --force

COPY . /src/ralphloop
RUN pip install --no-cache-dir "/src/ralphloop[temporal]" && rm -rf /src/ralphloop

# never root: the loops run with permission checks off, and the home holds this worker's own logins
RUN useradd --create-home --uid 1000 ralph && mkdir -p /work && chown ralph /work
USER ralph
WORKDIR /home/ralph
ENTRYPOINT ["ralph"]
CMD ["worker", "--help"]
