"""The tape backend, as a third party would ship one: every part of it named in one AgentSpec."""

from ralphloop.plugins.agents import AgentSpec

SPEC = AgentSpec(
    "ralphloop_tape.backend:make",
    log_format="tape-json",
    log_parser="ralphloop_tape.backend:TapeParser",
    log_reader="ralphloop_tape.reader:readable_lines",
    sniff="ralphloop_tape.reader:sniff",
)
