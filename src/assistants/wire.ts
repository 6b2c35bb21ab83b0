// What `hearth mcp` (the CLI's relay) and the daemon agree on, without loading either side.
/** The relay's endpoint on the owner's listeners. */
export const OWNER_MCP_PATH = '/v1/assistants/mcp'
/** `hearth mcp --name`: tells two clients of one name apart (the connection is named by both). */
export const LABEL_HEADER = 'x-hearth-assistant-name'
