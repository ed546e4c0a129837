"""The description files: model, parsing, folder, store (and the definitions served), watcher.

Imports only the top-level base (``settings``, ``options``, ``log``, ``caches``,
``payloads``, ``fastmcp_internals``); every other wing may import it.

Modules: ``model`` (``DescriptionFile``), ``rules`` (argument-dependent hints), ``errors``,
``format``, ``places`` and ``parsing`` (text to model, with ``path:line:col`` errors),
``folder`` (the folder on disk: where a relative one points, read safely), ``store`` (parsed
files, cached, one cheap ``stat`` per read; the definitions served, kept per file signature;
always-load pins), ``definitions`` (a full definition built: registered with its file merged
over it and ``$ref`` inlined, and its digest), ``watcher`` (the thread reporting changes).

Example:
    ```python
    from fastmcp_progressive.files.store import DescriptionStore
    ```
"""
