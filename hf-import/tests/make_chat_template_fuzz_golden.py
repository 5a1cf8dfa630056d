"""Dev-time script: a differential fuzz of `chat.rs` against transformers' `apply_chat_template(tokenize=False)`.

    /work/.refenv/bin/python hf-import/tests/make_chat_template_fuzz_golden.py

Fifteen templates reproduce (from memory) the constructs of popular models' chat templates: Llama 3.1/3.2
(tools, `date_string`, `strftime_now`, `ipython`), Qwen2.5/Qwen3 (`tojson`, `<tool_call>`, `namespace`, reversed
loops, thinking), Gemma 2/3, Phi-3.5, Mistral v0.3 (`[AVAILABLE_TOOLS]`, call ids), DeepSeek-R1-distill, SmolLM2,
Zephyr, a Command-R-like and a Granite-like template, one of edge constructs and one of `tojson`'s arguments. 315 random conversations (seed 34)
are rendered by transformers; a case records its text, or the exception when the template raises (the Rust side
must then return an error). `strftime_now` only feeds a year check, so the texts do not depend on the date.

Writes `fixtures/chat_template_fuzz.json`, replayed by `tests/cpu/chat_template_fuzz.rs`.
"""

import copy
import json
import random
from pathlib import Path

from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

TEMPLATES = {}

TEMPLATES["llama31"] = r'''{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if builtin_tools is defined or tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{%- if builtin_tools is defined %}
    {{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- "<|python_tag|>" + tool_call.name + ".call(" }}
            {%- for arg_name, arg_val in tool_call.arguments | items %}
                {{- arg_name + '="' + arg_val + '"' }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- endif %}
                {%- endfor %}
            {{- ")" }}
        {%- else  %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}
        {%- endif %}
        {%- if builtin_tools is defined %}
            {#- This means we're in ipython mode #}
            {{- "<|eom_id|>" }}
        {%- else %}
            {{- "<|eot_id|>" }}
        {%- endif %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
'''

TEMPLATES["llama32"] = r'''{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- set year = strftime_now("%Y") | int %}
{%- if year < 2000 %}
    {{- raise_exception("clock is wrong") }}
{%- endif %}
{%- if not date_string is defined %}
    {%- if strftime_now is defined %}
        {%- set date_string = strftime_now("%d %b %Y") %}
    {%- else %}
        {%- set date_string = "26 Jul 2024" %}
    {%- endif %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
'''

TEMPLATES["qwen25"] = r'''{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
'''

TEMPLATES["qwen3"] = r'''{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- if ns.multi_step_tool %}
    {{- raise_exception('No user query found in messages.') }}
{%- endif %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
                {%- set content = (content.split('</think>')|last).lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}'''

TEMPLATES["gemma3"] = r'''{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
'''

TEMPLATES["gemma2"] = r'''{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '
' + message['content'] | trim + '<end_of_turn>
' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model
'}}{% endif %}'''

TEMPLATES["phi35"] = r'''{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'user' %}{{'<|user|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>
' + message['content'] + '<|end|>
'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>
' }}{% else %}{{ eos_token }}{% endif %}'''

TEMPLATES["mistral_v03"] = r'''{%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
'''

TEMPLATES["deepseek_r1"] = r'''{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = message['content'] %}{%- endif %}{%- endfor %}{{bos_token}}{{ns.system_prompt}}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and 'tool_calls' in message %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls']%}{%- if not ns.is_first %}{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{%- set ns.is_first = true -%}{%- else %}{{'\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- endfor %}{%- endif %}{%- if message['role'] == 'assistant' and 'tool_calls' not in message %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'\n<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\n'}}{% endif %}'''

TEMPLATES["smollm2"] = r'''{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %}'''

TEMPLATES["zephyr"] = r'''{% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>
'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %}'''

TEMPLATES["command_r"] = r'''{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = '## Task and Context\nYou help people answer their questions.' %}{% endif %}
<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|># Safety Preamble
{{ system_message }}

## Available Tools
{% if tools %}
{% for tool in tools %}
```python
def {{ tool.function.name }}({% for pname, pdef in tool.function.parameters.properties.items() %}{{ pname }}: {{ pdef.type }}{% if pname in tool.function.parameters.required|default([]) %} (required){% endif %}{% if not loop.last %}, {% endif %}{% endfor %}) -> List[Dict]:
    """{{ tool.function.description }}
    """
    pass
```
{% endfor %}
{% else %}
(none)
{% endif %}
Roles seen: {{ loop_messages | map(attribute='role') | unique | join(', ') }}
User turns: {{ loop_messages | selectattr('role', 'equalto', 'user') | list | length }}
Assistant turns: {{ loop_messages | rejectattr('role', 'ne', 'assistant') | list | length }}<|END_OF_TURN_TOKEN|>
{%- for message in loop_messages %}
{%- if message['role'] == 'user' %}
<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{{ message['content'] }}<|END_OF_TURN_TOKEN|>
{%- elif message['role'] == 'assistant' %}
<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{{ message['content'] | default('', true) }}{% if message.tool_calls is defined %}
Action: ```json
[{% for tc in message.tool_calls %}{"tool_name": {{ tc.function.name | tojson }}, "parameters": {% if tc.function.arguments is mapping %}{% for k, v in tc.function.arguments.items() %}{% if loop.first %}{{ '{' }}{% endif %}{{ k | tojson }}: {{ v | tojson }}{% if loop.last %}{{ '}' }}{% else %}, {% endif %}{% else %}{}{% endfor %}{% else %}{{ tc.function.arguments }}{% endif %}}{% if not loop.last %}, {% endif %}{% endfor %}]
```{% endif %}<|END_OF_TURN_TOKEN|>
{%- elif message['role'] == 'tool' %}
<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><results>
{{ message['content'] }}
</results><|END_OF_TURN_TOKEN|>
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}'''

TEMPLATES["granite"] = r'''{%- set year = strftime_now('%Y') | int %}
{%- if year < 2000 %}{{ raise_exception('clock') }}{% endif %}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set system_message = "Knowledge Cutoff Date: April 2024.\nToday's Date: " + (date_string if date_string is defined else strftime_now('%B %d, %Y')) + ".\nYou are Granite, developed by IBM." %}
    {%- if tools and documents %}
        {%- set system_message = system_message + " You are a helpful AI assistant with access to the following tools. When a tool is required to answer the user's query, respond with <|tool_call|> followed by a JSON list of tools used. Write the response to the user's input by strictly aligning with the facts in the provided documents." %}
    {%- elif tools %}
        {%- set system_message = system_message + " You are a helpful AI assistant with access to the following tools. When a tool is required to answer the user's query, respond with <|tool_call|> followed by a JSON list of tools used." %}
    {%- elif documents %}
        {%- set system_message = system_message + " Write the response to the user's input by strictly aligning with the facts in the provided documents." %}
    {%- else %}
        {%- set system_message = system_message + " You are a helpful AI assistant." %}
    {%- endif %}
    {%- set loop_messages = messages %}
{%- endif %}
{{- '<|start_of_role|>system<|end_of_role|>' + system_message + '<|end_of_text|>\n' }}
{%- if tools %}
    {{- '<|start_of_role|>tools<|end_of_role|>' }}
    {{- tools | tojson(indent=4) }}
    {{- '<|end_of_text|>\n' }}
{%- endif %}
{%- if documents %}
    {%- for document in documents %}
        {{- '<|start_of_role|>document {"document_id": "' + document['doc_id'] | string + '"}<|end_of_role|>\n' }}
        {{- document['text'] }}
        {{- '<|end_of_text|>\n' }}
    {%- endfor %}
{%- endif %}
{%- for message in loop_messages %}
    {{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}
    {%- if message.tool_calls is defined %}
        {{- '<|tool_call|>' + message.tool_calls | map(attribute='function') | list | tojson + '\n' }}
    {%- endif %}
    {%- if loop.last and add_generation_prompt %}
        {{- '<|start_of_role|>assistant<|end_of_role|>' }}
    {%- endif %}
{%- endfor %}'''

TEMPLATES["edge"] = r'''{#- A template of edge constructs: comments, whitespace control, loop controls. -#}
{%- set ns = namespace(n=0, seen='') -%}
{%- set d = dict(a=1, b='two') -%}
[{{ d.a }}{{ d['b'] | upper }}]
{% for message in messages %}
    {%- if message.role == 'tool' %}{% continue %}{% endif %}
    {%- if ns.n >= max_turns | default(6) %}{% break %}{% endif %}
    {%- set ns.n = ns.n + 1 %}
    {%- set ns.seen = ns.seen ~ message.role[0] %}
  {{ loop.index }}/{{ loop.length }} {{ message.role | upper }}{% if loop.first %} first{% endif %}{% if loop.last %} last{% endif %}:
    {%- if message.content is string %}
 "{{ message.content | replace('\n', '\\n') }}" len={{ message.content | length }} strip={{ message.content.strip() | length }} words={{ message.content.split() | join('|') }}
    {%- elif message.content is none %}
 (none)
    {%- else %}
 parts={{ message.content | map(attribute='type') | join(',') }}
    {%- endif %}
    {%- if message.name is defined %} name={{ message.name | string }}{% endif %}
    {%- if message.tool_calls is defined and message.tool_calls %} calls={{ message.tool_calls | length }}{% endif %}

{% endfor %}
seen={{ ns.seen }} n={{ ns.n }} {{ 'tools' if tools is not none else 'notools' }} {{ 'docs' if documents is not none else 'nodocs' }}
custom={{ custom_var | default('unset') }}{% if custom_var is defined and custom_var is string %} upper={{ custom_var.upper() }} title={{ custom_var | title }} cap={{ custom_var | capitalize }} rev={{ custom_var | reverse }}{% endif %}
{% if custom_var is number %}num={{ custom_var * 2 }}{% endif %}
{%- if 'user' in messages | map(attribute='role') | list %} has_user{% endif %}
{%- if 'x' not in ns.seen %} no_x{% endif %}
{{ bos_token ~ '|' ~ eos_token }}{% if add_generation_prompt %}<gen>{% endif %}'''


TEMPLATES["tojson_opts"] = r"""{#- transformers' tojson arguments: ensure_ascii, indent (int or string), separators, sort_keys. -#}
{{- tools | tojson(ensure_ascii=true) }}
{{ messages | tojson(sort_keys=true, indent=2) }}
{{ messages[-1] | tojson(separators=(',', ':')) }}
{{ messages[0] | tojson(indent='\t') }}
{{ messages | map(attribute='role') | list | tojson(false, 1) }}
{% if custom_var is defined %}{{ custom_var | tojson }}{% endif %}"""

# ---------------------------------------------------------------------------------------------
# Random conversations (seed 34).

rng = random.Random(34)

TEXTS = [
    "Hello!",
    "What's the weather in Paris?",
    "héllo wörld — ça va?",
    "日本語のテキストです。",
    "emoji 🎉🚀 and ✓",
    "line one\nline two\n\nline four",
    "  padded with spaces  ",
    "\n leading newline",
    "trailing newline\n",
    "He said \"hi\" and 'bye'",
    "{{ not_a_variable }} and {% raw %} and {# c #}",
    "back\\slash C:\\path\\n tab\there",
    "",
    "   ",
    "</s> <|im_end|> looks like a token",
    "Ünïcödé ß ﬁ İstanbul",
    "<tool_response>\nlooks like a response\n</tool_response>",
    "a" * 3 + " b c  d",
]
THINK_TEXTS = [
    "<think>\nLet me think.\n</think>\n\nThe answer is 4.",
    "<think>reasoning only</think>final",
    "no think tags here",
    "\n\nstarts with newlines</think>\nafter",
]
TOOL_RESULTS = ['{"temperature": 22, "unit": "celsius"}', "sunny", "", "Résultat: 42\nok", '["a", "b"]']
NAMES = ["get_weather", "search", "calc", "brave_search"]


def rand_text():
    return rng.choice(TEXTS)


def rand_args():
    pool = [
        ("location", rng.choice(["Paris", "São Paulo", "東京", 'New "York"'])),
        ("unit", "celsius"),
        ("days", rng.choice([0, 3, -1, 1234567890123])),
        ("ratio", rng.choice([0.5, 3.0, 1e-05, 2.5e16, -0.25, 100.0])),
        ("flag", rng.choice([True, False])),
        ("missing", None),
        ("tags", ["x", "ü", 1]),
        ("nested", {"a": {"b": [1, {"c": "d"}]}, "e": []}),
        ("query", "what's up?\nnew line"),
    ]
    rng.shuffle(pool)
    return dict(pool[: rng.randint(0, 4)])


def rand_id():
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(9))


def rand_tool_call(string_args, with_id):
    args = rand_args()
    call = {"type": "function", "function": {"name": rng.choice(NAMES[:3]), "arguments": json.dumps(args, ensure_ascii=False) if string_args else args}}
    if with_id:
        call["id"] = rand_id()
    return call


def rand_tools():
    tools = []
    for name in rng.sample(NAMES[:3], rng.randint(1, 3)):
        props = {"location": {"type": "string", "description": "City, e.g. “Zürich”"}, "days": {"type": "integer", "minimum": 0}}
        if rng.random() < 0.5:
            props["unit"] = {"type": "string", "enum": ["celsius", "fahrenheit"]}
        fn = {"name": name, "description": rng.choice(["Gets the weather.", "Searches the web for \"things\".", "Calcule — vite."]), "parameters": {"type": "object", "properties": props, "required": ["location"]}}
        if rng.random() < 0.3:
            fn["return"] = {"type": "string"}
        tools.append({"type": "function", "function": fn})
    return tools


def content(lists):
    if lists and rng.random() < 0.3:
        parts = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.35:
                parts.append({"type": "image"})
            else:
                parts.append({"type": "text", "text": rand_text()})
        return parts
    return rand_text()


# What each template accepts: system message, content lists, tools and tool calls, strict alternation,
# JSON-string arguments, 9-character call ids, one call per message, reasoning fields.
PROFILES = {
    "llama31": dict(system=True, lists=False, tools=True, single_call=True),
    "llama32": dict(system=True, lists=False, tools=True, single_call=True),
    "qwen25": dict(system=True, lists=False, tools=True),
    "qwen3": dict(system=True, lists=False, tools=True, reasoning=True, think=True),
    "gemma3": dict(system=True, lists=True, alternate=True),
    "gemma2": dict(system=False, lists=False, alternate=True),
    "phi35": dict(system=True, lists=False),
    "mistral_v03": dict(system=True, lists=False, tools=True, ids=True, alternate=True),
    "deepseek_r1": dict(system=True, lists=False, tools=True, string_args=True, think=True),
    "smollm2": dict(system=True, lists=False),
    "zephyr": dict(system=True, lists=False),
    "command_r": dict(system=True, lists=False, tools=True),
    "granite": dict(system=True, lists=False, tools=True, documents=True),
    "edge": dict(system=True, lists=True, tools=True, documents=True),
    "tojson_opts": dict(system=True, lists=True, tools=True, reasoning=True),
}


def conversation(p, break_rules):
    msgs = []
    if p.get("system") and rng.random() < 0.5 or (break_rules and rng.random() < 0.3):
        msgs.append({"role": "system", "content": content(p.get("lists"))})
    for turn in range(rng.randint(1, 3)):
        msgs.append({"role": "user", "content": content(p.get("lists") or (break_rules and rng.random() < 0.3))})
        last = turn > 0 and rng.random() < 0.5
        if last and rng.random() < 0.5:
            break
        if p.get("tools") and rng.random() < 0.5:
            n = 1 if p.get("single_call") and not break_rules else rng.randint(1, 2)
            string_args = p.get("string_args") or rng.random() < 0.4
            calls = [rand_tool_call(string_args, p.get("ids") and not (break_rules and rng.random() < 0.5)) for _ in range(n)]
            m = {"role": "assistant", "tool_calls": calls}
            if p.get("string_args"):
                m["content"] = None  # dropped by transformers
            elif rng.random() < 0.5:
                m["content"] = rng.choice(["", "Let me check.", "<think>\ncalling\n</think>\n\nok"])
            else:
                m["content"] = ""
            msgs.append(m)
            for c in calls:
                t = {"role": "tool", "content": rng.choice(TOOL_RESULTS)}
                if "id" in c:
                    t["tool_call_id"] = c["id"]
                elif p.get("ids"):
                    t["tool_call_id"] = rand_id()
                msgs.append(t)
        text = rng.choice(THINK_TEXTS) if p.get("think") and rng.random() < 0.5 else content(p.get("lists"))
        a = {"role": "assistant", "content": text}
        if p.get("reasoning") and rng.random() < 0.4:
            a[rng.choice(["reasoning_content", "reasoning", "thinking"])] = rng.choice(["\nI reason.\n", "short", ""])
        if rng.random() < 0.15:
            a["tool_calls"] = None  # dropped by transformers
        if rng.random() < 0.1:
            a["name"] = rng.choice(["bot", None])
        msgs.append(a)
    if break_rules:
        kind = rng.randrange(3)
        if kind == 0 and len(msgs) > 1:
            msgs.insert(rng.randrange(len(msgs)), {"role": "assistant", "content": "out of turn"})
        elif kind == 1:
            msgs.append({"role": rng.choice(["user", "assistant"]), "content": "again"})
        else:
            msgs.insert(0, {"role": rng.choice(["system", "tool", "ipython", "developer"]), "content": "odd role"})
    if rng.random() < 0.2 and msgs[-1]["role"] != "user":
        msgs.append({"role": "user", "content": rand_text()})
    return msgs


TOKENS = [("<s>", "</s>"), ("<|begin_of_text|>", "<|eot_id|>"), ("<bos>", "<eos>"), ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")]


def make_case(i, name):
    p = PROFILES[name]
    break_rules = rng.random() < 0.2
    case = {"id": i, "template": name, "messages": conversation(p, break_rules)}
    tools = rand_tools() if p.get("tools") and rng.random() < 0.5 else None
    documents = None
    if p.get("documents") and rng.random() < 0.4:
        documents = [{"doc_id": k, "title": f"Doc {k}", "text": rand_text()} for k in range(rng.randint(1, 2))]
    extra = {}
    if name in ("llama31", "llama32", "granite") or rng.random() < 0.2:
        extra["date_string"] = rng.choice(["26 Jul 2024", "01 Jan 2025"])
    if rng.random() < 0.4:
        extra["enable_thinking"] = rng.choice([True, False])
    if name in ("edge", "tojson_opts") or rng.random() < 0.1:
        extra["custom_var"] = rng.choice(["hello world", "ÉCOLE été", 7, 2.5, "mIxEd cAsE"])
        if rng.random() < 0.4:
            extra["max_turns"] = rng.randint(1, 3)
    if name == "llama31" and rng.random() < 0.3:
        extra["builtin_tools"] = ["brave_search", "wolfram_alpha", "code_interpreter"]
        extra["tools_in_user_message"] = rng.choice([True, False])
    if name == "llama31" and tools is not None and rng.random() < 0.3:
        extra["tools_in_user_message"] = False
    bos, eos = rng.choice(TOKENS)
    case.update(tools=tools, documents=documents, add_generation_prompt=rng.random() < 0.6, extra=extra, bos_token=bos, eos_token=eos)
    return case


_tokenizers = {}


def tokenizer(bos, eos):
    if (bos, eos) not in _tokenizers:
        model = models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
        _tokenizers[bos, eos] = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(model), bos_token=bos, eos_token=eos)
    return _tokenizers[bos, eos]


def render(case):
    tok = tokenizer(case["bos_token"], case["eos_token"])
    try:
        text = tok.apply_chat_template(
            copy.deepcopy(case["messages"]),
            tools=copy.deepcopy(case["tools"]),
            documents=copy.deepcopy(case["documents"]),
            chat_template=TEMPLATES[case["template"]],
            tokenize=False,
            add_generation_prompt=case["add_generation_prompt"],
            **copy.deepcopy(case["extra"]),
        )
        return text, None
    except Exception as e:  # the template raised (raise_exception, a type error, ...)
        return None, f"{type(e).__name__}: {e}"


def main():
    names = list(TEMPLATES)
    cases = []
    for i in range(315):
        case = make_case(i, names[i % len(names)])
        case["expected"], case["error"] = render(case)
        cases.append(case)
    out = Path(__file__).resolve().parent / "fixtures" / "chat_template_fuzz.json"
    # One case a line, so that a regenerated file diffs case by case.
    lines = [json.dumps(c, ensure_ascii=False) for c in cases]
    templates = json.dumps(TEMPLATES, ensure_ascii=False, indent=1)
    out.write_text('{"templates": ' + templates + ',\n"cases": [\n' + ",\n".join(lines) + "\n]}\n")
    errs = sum(c["error"] is not None for c in cases)
    print(f"{len(cases)} cases over {len(names)} templates, {errs} raise; wrote {out}")
    for c in cases:
        if c["error"]:
            print(c["id"], c["template"], c["error"][:100].replace("\n", " "))


if __name__ == "__main__":
    main()
