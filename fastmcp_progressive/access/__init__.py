"""Who may call what: the caller, its grants, its listing mode, and the gate on ``tools/call``.

Imports the base and ``files``; never ``disclosure``, ``resolution``, the middleware or above.

Modules: ``caller`` (whose grants a request uses, found once per request and held for it;
sessions opened for one call), ``grants`` (where they live), ``modes`` (full or progressive,
per client, by the base's host profiles), ``hooks`` (author hooks run bounded), ``catalog``
(what the caller may see, asked of FastMCP), ``arguments`` (FastMCP's own argument
check), ``gate`` (the one decision per call, from the call's facts gathered once: the
tool found once, or as last found), ``gateways`` (the tools FastMCP's gateway transforms
generate, never gated).

Example:
    ```python
    from fastmcp_progressive.access.gate import Gate
    ```
"""
