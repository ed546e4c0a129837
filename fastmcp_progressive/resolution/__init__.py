"""Tool resolution (``tools/resolve``): the server side and the ``fastmcp.Client`` side.

Imports the base, ``files``, ``access`` and ``disclosure``; never the middleware or above.

Modules: ``server`` (``ToolResolution``: hints from a file's rules, author hooks),
``client`` (``resolve_tool`` and the groups calls for a ``fastmcp.Client``).

Example:
    ```python
    from fastmcp_progressive.resolution.client import resolve_tool
    ```
"""
