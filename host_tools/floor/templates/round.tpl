% rebase('base.tpl')
<h1>Table {{r.table_id}}, round {{r.round}}</h1>
<p>status <b id="status">{{r.status}}</b>
% if r.void:
· <b class="void" id="void">VOID: {{r.void}}</b>
% end
% if r.restart:
· <b id="restart">the board restarted in this round: {{r.restart}}</b>
% end
% if r.damage:
· <b class="error" id="damage">DAMAGED record: {{r.damage}}</b>
% end
· <a href="/table/{{r.table_id}}/round/{{r.round}}.json">JSON</a></p>
<ul id="times">
% for name, at in r.times:
<li>{{name}}: {{at}}</li>
% end
</ul>
% if r.corrections:
<h2>Corrections</h2>
<ul id="corrections">
% for old, new, at in r.corrections:
<li>{{old}} &rarr; {{new}} {{at}}</li>
% end
</ul>
% end
% if r.alarm_texts:
<p>alarms in the round: {{', '.join(r.alarm_texts)}}</p>
% end
% if r.layout_warning:
<p class="health health-warning" id="layout-warning">Winning areas not drawn: {{r.layout_warning}}. Give the floor this table's table file (<code>--table-file</code>).</p>
% end
<section class="layout" id="layout">{{!r.svg}}</section>
<h2>Records ({{len(r.records)}})</h2>
<table class="list" id="records">
<tr><th>seq</th><th>type</th><th>record</th><th>received by the floor</th><th>checked</th><th>bytes</th></tr>
% for d in r.records:
<tr data-seq="{{d['seq']}}" data-type="{{d['type']}}" class="{{'differs' if d['checked'] == 'damaged' else ''}}"><td>{{d['seq']}}</td><td>{{d['type']}}</td><td class="mono">{{d['line']}}</td><td>{{d['received']}}</td><td>{{d['checked']}}</td><td><details><summary>{{d['length']}}</summary><code class="raw">{{d['raw']}}</code></details></td></tr>
% end
</table>
