"""The Claude Code transcript format (JSON Lines): ``~/.claude/projects/<cwd>/<session>.jsonl``.

``records`` renders the records a session read from Claude Code stands for (the reader uses the
same rendering to keep only what differs from it), ``reader`` builds the IR, ``tree`` finds the
branches in the records' parentUuid tree, ``writer`` writes any other session as a transcript
the client resumes, ``plugin`` is the format object."""

NAMESPACE = "claude-code/1"
TABLE = "claude-code"
