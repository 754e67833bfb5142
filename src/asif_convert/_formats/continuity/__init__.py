"""The agent-continuity export format."""

NAMESPACE = "agent-continuity/1"  # native home of continuity-only fields, in IR and in ASIF
SOURCE_PRODUCER = "agent-continuity"
CONTENT_SCHEMA = "agent-continuity.content-json/1"  # structured part holding content_json verbatim
EVENT_TYPE = "agent-continuity.event/1"  # extension event holding a continuity event
ASIF_PARTS = "asif.parts/1"  # content_json key holding ASIF parts that have no continuity shape
