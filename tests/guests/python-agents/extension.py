"""The Python agents test guest: octet's Python SDK's child-agent helpers
(spawn, steer, follow up, list, wait, interrupt, list models) behind one
tool each, written in the SDK's idiom, for tests/e2e/python_agents.rs
(built by scripts/build-guests-python into
target/components/python/agents.wasm).

Each tool passes its arguments to the helper as keyword arguments and
answers what the helper returned as JSON text, so the test checks both the
frames the shim writes and what the guest received. What the helper raises
is the tool's answer as the SDK makes it (an RpcError is the call's error,
a ValueError an `is_error` result); with `"catch": true` the tool answers
the exception's class, code and text instead, as the guest saw it.
"""

import functools
import json

from octet_extension import Extension, RpcError

# One instance, and only the features it uses: model selection is
# negotiated only when named here.
ext = Extension(
    max_concurrent_requests=1,
    supported_features=("request_cancellation", "agent_sessions", "agent_model_selection_v1"),
)


def reporting(helper):
    """A tool handler calling ``helper(arguments)`` and answering its result
    as JSON, or with ``catch`` the exception it raised."""

    @functools.wraps(helper)
    def tool(args):
        args = dict(args)
        catch = args.pop("catch", False)
        try:
            return json.dumps(helper(args), ensure_ascii=False)
        except (RpcError, ValueError) as exc:
            if not catch:
                raise
            return f"{type(exc).__name__} {getattr(exc, 'code', '-')}: {exc}"

    return tool


@ext.tool(name="agent_spawn", description="spawn_agent(**arguments)")
@reporting
def spawn(args):
    return ext.spawn_agent(**args)


@ext.tool(name="agent_send", description="send_agent_message(target, message, **rest)")
@reporting
def send(args):
    return ext.send_agent_message(args.pop("target"), args.pop("message"), **args)


@ext.tool(name="agent_follow_up", description="follow_up_agent(target, message, **rest)")
@reporting
def follow_up(args):
    return ext.follow_up_agent(args.pop("target"), args.pop("message"), **args)


@ext.tool(name="agent_list", description="list_agents(**arguments)")
@reporting
def list_(args):
    return ext.list_agents(**args)


@ext.tool(name="agent_wait", description="wait_agents(**arguments)")
@reporting
def wait(args):
    return ext.wait_agents(**args)


@ext.tool(name="agent_interrupt", description="interrupt_agent(target, **rest)")
@reporting
def interrupt(args):
    return ext.interrupt_agent(args.pop("target"), **args)


@ext.tool(name="agent_models", description="list_agent_models(**arguments)")
@reporting
def models(args):
    return ext.list_agent_models(**args)


if __name__ == "__main__":
    ext.run()
