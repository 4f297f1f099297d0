// Drive an MCP server with the official TypeScript SDK v2 client (@modelcontextprotocol/client)
// and print what it saw as one JSON object on stdout.
//
//   node client.mjs MODE stdio COMMAND [ARG...]   (the SDK starts the server)
//   node client.mjs MODE http URL                 (Streamable HTTP)
//
// MODE is "default" (no versionNegotiation option: the SDK's default, the 2025 initialize
// handshake), "legacy", "auto" (probe server/discover, fall back to initialize) or a
// protocol version to pin, e.g. "2026-07-28". The client connects, lists the tools, calls
// echo, and calls test_input_required_result_elicitation, answering the elicitation with its
// elicitation/create handler: the server asks through a request in a 2025 session, through an
// input_required result (a multi round-trip call) on 2026-07-28. An error is printed as
// {"error": ...} with exit status 1.
import { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const TIMEOUT = { timeout: 10_000 };

function negotiation(mode) {
  if (mode === "default") return {};
  if (mode === "legacy" || mode === "auto") return { versionNegotiation: { mode } };
  return { versionNegotiation: { mode: { pin: mode } } };
}

function transportFor(kind, rest) {
  if (kind === "stdio") {
    const [command, ...args] = rest;
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}

async function main() {
  const [mode, kind, ...rest] = process.argv.slice(2);
  const elicited = [];
  const client = new Client(
    { name: "trimcp-interop-ts", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, ...negotiation(mode) },
  );
  client.setRequestHandler("elicitation/create", async (request, ctx) => {
    elicited.push({ id: ctx.mcpReq.id, message: request.params.message });
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transportFor(kind, rest), TIMEOUT);
  try {
    const tools = await client.listTools(undefined, TIMEOUT);
    const echo = await client.callTool({ name: "echo", arguments: { text: "héllo" } }, TIMEOUT);
    const asked = await client.callTool(
      { name: "test_input_required_result_elicitation", arguments: {} },
      TIMEOUT,
    );
    const report = {
      era: client.getProtocolEra(),
      protocolVersion: client.getNegotiatedProtocolVersion(),
      server: client.getServerVersion(),
      discovered: client.getDiscoverResult()?.supportedVersions ?? null,
      tools: tools.tools.map((tool) => tool.name),
      echo: echo.content,
      elicitation: asked.content,
      elicited,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await client.close();
  }
}

main().catch((error) => {
  process.stdout.write(`${JSON.stringify({ error: String(error?.stack ?? error) })}\n`);
  process.exit(1);
});
