"""The description files: their model, parsing, folder, store, watcher and merged definitions.

Imports only the top-level base (``settings``, ``options``, ``log``, ``caches``,
``payloads``, ``fastmcp_internals``); every other wing may import it.

Modules: ``model`` (``DescriptionFile``), ``rules`` (argument-dependent hints), ``errors``,
``format``, ``places`` and ``parsing`` (text to model, with ``path:line:col`` errors),
``folder`` (the folder on disk: where a relative one points, read safely), ``store``
(parsed files, cached; one cheap ``stat`` per read), ``watcher`` (the thread reporting
changes), ``schema_refs``, ``definitions`` (registered definition with its file merged
over it), ``pins`` (always-load tools).

Example:
    ```python
    from fastmcp_progressive.files.store import DescriptionStore
    ```
"""
