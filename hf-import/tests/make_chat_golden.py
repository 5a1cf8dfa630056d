"""Dev-time script: transformers' `apply_chat_template` with content lists, tool calls, `tools`,
`documents=None` and an extra variable (`enable_thinking`), for `chat.rs`'s test.

    /work/.refenv/bin/python hf-import/tests/make_chat_golden.py

Writes `fixtures/chat_tools.json`: the template, the messages, the tools and transformers' text.
"""

from pathlib import Path
import json
from transformers import PreTrainedTokenizerFast
from tokenizers import Tokenizer, models
TEMPLATE = """{%- if tools %}<tools>{% for t in tools %}{{ t | tojson }}{% if not loop.last %},{% endif %}{% endfor %}</tools>
{% endif %}{% if documents is none %}[no documents]{% endif %}{% for m in messages %}<|{{ m.role }}|>{% if m.content is string %}{{ m.content }}{% else %}{% for part in m.content %}{% if part.type == 'text' %}{{ part.text }}{% else %}[{{ part.type }}]{% endif %}{% endfor %}{% endif %}{% if m.tool_calls %}{% for c in m.tool_calls %}<call>{{ c.function.name }}({{ c.function.arguments | tojson }})</call>{% endfor %}{% endif %}
{% endfor %}{% if add_generation_prompt %}<|assistant|>{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}{% endif %}"""
tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"a":0,"[UNK]":1}, unk_token="[UNK]")))
messages = [
  {"role": "system", "content": "Be brief."},
  {"role": "user", "content": [{"type": "text", "text": "What is "}, {"type": "image"}, {"type": "text", "text": "?"}]},
  {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "look", "arguments": {"what": "sun", "n": 2}}}]},
  {"role": "tool", "content": "{\"result\": \"a star\"}"},
]
tools = [{"type": "function", "function": {"name": "look", "description": "Looks at a thing.", "parameters": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]}}}]
text = tok.apply_chat_template(messages, tools=tools, chat_template=TEMPLATE, tokenize=False, add_generation_prompt=True, enable_thinking=False)
out = Path(__file__).resolve().parent / "fixtures" / "chat_tools.json"
out.write_text(json.dumps({"template": TEMPLATE, "messages": messages, "tools": tools, "text": text}, indent=1) + "\n")
print(text)
