"""The agent front end: the tools kb_search / kb_read / kb_tree / kb_manage and `trove mcp`.

It sits above the engine like the CLI (agent -> runtime -> knowledge): every tool goes
through `KnowledgeService`, and queued work runs on the runtime's `JobExecutor`.

- `specs`: the tools' names, descriptions and JSON schemas, and their limits
- `args`: checking a tool call's JSON arguments
- `errors`: tool error codes and the result type every call returns
- `concept_ids`: the shape check of a Concept ID
- `views`: how items, documents and search hits look to an agent (JSON)
- `grep`: kb_read's pattern mode over one document
- `tree`: kb_tree's folder listing and its paging cursors
- `tools`: `ConceptTools`, the four tools over one service
- `jobs`: the job executor hosted in its own Qt thread for kb_manage
- `server`: the MCP server on stdio; `client_config`: the snippet an MCP client needs
"""
