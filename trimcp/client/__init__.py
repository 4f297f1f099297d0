"""The client side of MCP: sessions to servers, and a supervised host of many servers.

Parts: the ``mcpServers`` configuration (``_config*``), the stdio process launcher
(``_process*``), and plain-language explanations of failures (``_explain*``).
"""
