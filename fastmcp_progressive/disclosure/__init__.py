"""What a client is shown: the reduced listing, groups, the descriptions resource and bridges.

Imports the base, ``files`` and ``access``; never ``resolution``, the middleware or above.

Modules: ``tools_list`` (the ``tools/list`` answer for one caller), ``describer`` (reads
of the descriptions resource with the names they select, ``describe_tools``, ``run_tool``
and the teaching refusal, in a mounting parent's names), ``announce`` (the extension in
``initialize`` / ``server/discover``), ``listing`` and ``listed_schema`` (one line and a
truthful schema per tool, per level, ``x-mcp-header`` properties kept; the start-up
preload), ``groups`` (the grouping draft), ``toolcap`` (listings within a host's tool cap),
``components`` and ``bridge`` (the descriptions resource, ``describe_tools``,
``run_tool``), ``guidance`` (system-prompt text), ``suggestions`` (``available_tools``),
``search`` (what a ``describe_tools`` query takes and answers), ``index`` (its BM25
index, a plural finding its singular), ``cost`` (what the
middleware saves and adds, in tokens; the start-up warning),
``hot_reload`` (keeping what clients were shown current, and the legacy sessions told).

Example:
    ```python
    from fastmcp_progressive.disclosure.guidance import agent_guidance
    ```
"""
