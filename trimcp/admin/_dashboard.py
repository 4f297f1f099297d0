"""``/``: the dashboard, one self-contained HTML page (no external assets, no build step).

The page is rendered here from the ``/status`` document, so it shows the truth without a
script (``chromium --dump-dom``, a text browser, a script blocker); a small inline script
then fetches ``/status`` every ``[admin] refresh_interval`` seconds and redraws the same
sections. Upstream names, errors and client names are untrusted text: every value is
escaped here (``html.escape``), and the script only ever sets ``textContent``.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = ["render_dashboard"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .3em} h2{font-size:1.05em;margin:1.4em 0 .4em}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:.25em .6em;
text-align:left;vertical-align:top} th{background:#f0f0f0}
.ok{color:#1a7f37}.bad{color:#b42318;font-weight:600}.warn{color:#9a6700}
ul.tree{list-style:none;padding-left:1.2em;margin:0} .muted{color:#777}
pre{margin:0;white-space:pre-wrap}
"""

# Redraws the page's sections from /status; values go in with textContent only.
_SCRIPT = """
(function(){
const every = %(interval)s * 1000;
function el(tag, text, cls){const e=document.createElement(tag);
 if(text!==undefined&&text!==null)e.textContent=String(text); if(cls)e.className=cls; return e;}
function row(cells){const tr=el('tr');
 for(const c of cells){tr.appendChild(el('td',c));} return tr;}
function fill(id, rows){const body=document.getElementById(id); if(!body)return;
 body.replaceChildren(...rows.map(row));}
function node(n){const li=el('li'); li.appendChild(el('span', n.id+' ', 'id'));
 li.appendChild(el('span', '['+n.kind+', '+n.state+', restarts '+n.restarts+']',
   n.state==='running'?'ok':'bad'));
 if(n.children_total>n.children.length){li.appendChild(el('span',
   ' (showing '+n.children.length+' of '+n.children_total+')','muted'));}
 if(n.children.length){const ul=el('ul'); ul.className='tree';
   for(const c of n.children)ul.appendChild(node(c)); li.appendChild(ul);}
 return li;}
async function refresh(){
 try{const r=await fetch('status',{headers:{'Accept':'application/json'}});
  const s=await r.json();
  const h=document.getElementById('health');
  h.textContent=s.health.ready?'ready':'not ready: '+s.health.not_ready.join('; ');
  h.className=s.health.ready?'ok':'bad';
  document.getElementById('sessions-total').textContent=String(s.sessions_total);
  const tree=document.getElementById('tree');
  if(s.tree){tree.replaceChildren(node(s.tree));}
  fill('listeners', s.listeners.map(l=>[l.name,l.address,l.bound?'bound':'not bound',
   l.sessions,l.in_flight,l.created]));
  fill('upstreams', s.upstreams.map(u=>[u.name,u.state,u.pid,u.restarts,u.tools,
   u.last_error||'']));
  fill('sessions', s.sessions.map(x=>[x.listener,x.id,x.client,x.protocol_version,
   x.age.toFixed(1),x.idle.toFixed(1),x.mailbox.length,x.in_flight]));
 }catch(e){document.getElementById('health').textContent='status unavailable: '+e;}
}
setInterval(refresh, every);
})();
"""


def render_dashboard(status: Mapping[str, object], refresh_interval: float) -> str:
    """The whole page for ``status`` (a ``/status`` document)."""
    app = _mapping(status.get("application"))
    health = _mapping(status.get("health"))
    ready = bool(health.get("ready"))
    not_ready = [str(x) for x in _sequence(health.get("not_ready"))]
    title = f"{app.get('name', 'trimcp')} {app.get('version', '')}".strip()
    health_text = "ready" if ready else "not ready: " + "; ".join(not_ready)
    tree = status.get("tree")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)} admin</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>pid {_e(app.get('pid'))}, started {_e(app.get('started_at'))}, state "
        f'{_e(app.get("state"))} &mdash; <span id="health" class="{"ok" if ready else "bad"}">'
        f"{_e(health_text)}</span></p>",
        "<h2>Supervision tree</h2>",
        f'<div><ul class="tree" id="tree">{_tree(tree) if isinstance(tree, dict) else ""}</ul>'
        "</div>",
        "<h2>Listeners</h2>",
        _table(
            ("listener", "address", "bound", "sessions", "in flight", "created"),
            "listeners",
            (
                (
                    x.get("name"),
                    x.get("address"),
                    "bound" if x.get("bound") else "not bound",
                    x.get("sessions"),
                    x.get("in_flight"),
                    x.get("created"),
                )
                for x in map(_mapping, _sequence(status.get("listeners")))
            ),
        ),
        "<h2>Upstreams</h2>",
        _table(
            ("upstream", "state", "pid", "restarts", "tools", "last error"),
            "upstreams",
            (
                (
                    x.get("name"),
                    x.get("state"),
                    x.get("pid"),
                    x.get("restarts"),
                    x.get("tools"),
                    x.get("last_error") or "",
                )
                for x in map(_mapping, _sequence(status.get("upstreams")))
            ),
        ),
        f'<h2>Sessions (<span id="sessions-total">{_e(status.get("sessions_total"))}</span>'
        " in all)</h2>",
        _table(
            ("listener", "id", "client", "protocol", "age s", "idle s", "mailbox", "in flight"),
            "sessions",
            (
                (
                    x.get("listener"),
                    x.get("id"),
                    x.get("client"),
                    x.get("protocol_version"),
                    _seconds(x.get("age")),
                    _seconds(x.get("idle")),
                    _mapping(x.get("mailbox")).get("length"),
                    x.get("in_flight"),
                )
                for x in map(_mapping, _sequence(status.get("sessions")))
            ),
        ),
        f'<p class="muted">Refreshes every {_e(f"{refresh_interval:g}")} s from '
        '<a href="status">/status</a>; metrics at <a href="metrics">/metrics</a>.</p>',
        f"<script>{_SCRIPT % {'interval': json.dumps(refresh_interval)}}</script>",
        "</body></html>",
    ]
    return "\n".join(parts)


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _seconds(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, int | float) else ""


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def _sequence(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else []


def _table(heads: Sequence[str], body_id: str, rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in heads)
    cells = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table><thead><tr>{head}</tr></thead><tbody id="{body_id}">{cells}</tbody></table>'


def _tree(node: Mapping[str, object]) -> str:
    children = [_mapping(c) for c in _sequence(node.get("children"))]
    state = node.get("state")
    label = f"[{node.get('kind')}, {state}, restarts {node.get('restarts')}]"
    shown = f'<span class="id">{_e(node.get("id"))} </span>'
    shown += f'<span class="{"ok" if state == "running" else "bad"}">{_e(label)}</span>'
    total = node.get("children_total")
    if isinstance(total, int) and total > len(children):
        shown += f'<span class="muted"> (showing {len(children)} of {total})</span>'
    if children:
        shown += '<ul class="tree">' + "".join(_tree(c) for c in children) + "</ul>"
    return f"<li>{shown}</li>"
