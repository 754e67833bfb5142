"""content_json in each provider dialect, one of each kind of block that maps onto a constrained
ASIF value (a media type, an id, a tool name, base64 data, a URL, a file id, usage counters).
The schema says only "any JSON" for content_json: these shapes, with edge values swapped into
their leaves by the fuzzer, are what reach the dialects' mapping of such values."""

from __future__ import annotations

from typing import Any

_B64 = "aGVsbG8="
SHAPES: list[Any] = [
    # Anthropic Messages
    [{"type": "text", "text": "hi", "citations": None},
     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _B64}},
     {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
     {"type": "image", "source": {"type": "file", "file_id": "file_1"}}],
    [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": _B64},
      "title": "t", "context": "c"},
     {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}},
     {"type": "document", "source": {"type": "url", "url": "https://example.com/d.pdf"}},
     {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "c"}]}},
     {"type": "container_upload", "file_id": "file_2"}],
    [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "redacted_thinking", "data": "x"},
     {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}}],
    [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
      "content": [{"type": "text", "text": "ok"},
                  {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": _B64}}]}],
    [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
     {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
     {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "kit", "input": {}},
     {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": True, "content": "e"}],
    {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "end_turn",
     "stop_sequence": None, "content": [{"type": "text", "text": "a"}],
     "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 0}},
    # OpenAI Chat Completions
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
        {"id": "call_2", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    {"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_B64}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/i.png", "detail": "low"}},
        {"type": "input_audio", "input_audio": {"data": _B64, "format": "wav"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{_B64}", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-1"}}]},
    {"role": "assistant", "content": "x", "refusal": "no", "function_call": {"name": "g", "arguments": "{}"},
     "audio": {"id": "audio_1", "data": _B64, "expires_at": 1, "transcript": "t"}},
    # OpenAI Responses
    [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hm"}],
      "encrypted_content": "e"},
     {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
      "content": [{"type": "output_text", "text": "a", "annotations": []}]},
     {"type": "function_call", "id": "fc_1", "call_id": "call_3", "name": "f", "arguments": '{"a": 1}'}],
    [{"type": "function_call_output", "call_id": "call_3", "output": "done"},
     {"role": "user", "content": [{"type": "input_text", "text": "a"},
                                  {"type": "input_image", "image_url": f"data:image/png;base64,{_B64}"},
                                  {"type": "input_file", "file_data": _B64, "filename": "f.txt"}]}],
    # Google Gen AI
    {"role": "model", "parts": [{"text": "t", "thought": True}, {"text": "x", "thought_signature": "c2ln"},
                                {"function_call": {"id": "fn_1", "name": "f", "args": {"a": 1}}},
                                {"inline_data": {"mime_type": "image/png", "data": _B64}},
                                {"file_data": {"mime_type": "application/pdf", "file_uri": "gs://b/f.pdf"}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "fn_1", "name": "f", "response": {"output": 1}}},
                               {"inlineData": {"data": _B64, "mimeType": "image/png"}}]},
]
