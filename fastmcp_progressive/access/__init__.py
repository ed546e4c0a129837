"""Who may call what: the caller, its grants, its listing mode, and the gate on ``tools/call``.

Imports the base and ``files``; never ``disclosure``, ``resolution``, the middleware or above.

Modules: ``caller`` (whose grants a request uses), ``grants`` (where they live), ``modes``
(full or progressive, per client, by the base's host profiles), ``hooks`` (author hooks run
bounded), ``engagement`` (sessions opened for one call), ``catalog`` and ``lookup`` (what
the caller may see, asked of FastMCP), ``request`` (one request's record: its caller found
once, which tool a call runs, whether an outer gate passed it), ``mounts`` (mount prefixes),
``site`` (what the server tells the gate), ``arguments`` (FastMCP's own argument check),
``ordering`` (middleware that may not sit in front), ``gate`` (the one decision per call).

Example:
    ```python
    from fastmcp_progressive.access.gate import Gate
    ```
"""
