"""hello-tools (API 0.4): octet's minimal Python recipe, one tool that
answers `Hello from octet.`, written for octet's Python SDK and built
unchanged into a component."""

from octet_extension import Extension

ext = Extension(api_version="0.4", max_concurrent_requests=1)


@ext.tool(name="hello", description="Return a local greeting")
def hello(arguments):
    return "Hello from octet."


if __name__ == "__main__":
    ext.run()
