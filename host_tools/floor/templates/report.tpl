% rebase('base.tpl')
<h1>Table {{rep.table_id}}: {{rep.day}} (UTC)</h1>
<p><a href="/table/{{rep.table_id}}/report/{{rep.day}}.csv" id="csv">CSV</a></p>
<table class="list" id="summary-table">
<tr><th>rounds</th><td data-k="rounds">{{rep.rounds}}</td></tr>
<tr><th>paid</th><td data-k="paid">{{rep.paid}}</td></tr>
<tr><th>voids</th><td data-k="voids">{{rep.voids}}</td></tr>
<tr><th>unfinished</th><td data-k="unfinished">{{rep.unfinished}}</td></tr>
<tr><th>rounds</th><td>{{rep.first_round}} .. {{rep.last_round}}</td></tr>
</table>
<h2>Voids by reason</h2>
<ul id="void-reasons">
% for reason, n in sorted(rep.void_reasons.items()):
<li data-reason="{{reason}}" data-n="{{n}}">{{reason}}: {{n}}</li>
% end
</ul>
<h2>Wins per area (paid rounds)</h2>
<table class="list" id="wins">
% for area, n in rep.wins.items():
<tr data-area="{{area}}" data-n="{{n}}"><td>{{area}}</td><td>{{n}}</td></tr>
% end
</table>
<h2>Corrections</h2>
<ul id="corrected">
% for rid, n, first, now in rep.corrected:
<li><a href="/table/{{rep.table_id}}/round/{{rid}}">round {{rid}}</a>: {{'-'.join(map(str, first or ()))}} &rarr; {{'-'.join(map(str, now or ()))}}</li>
% end
</ul>
% if rep.damaged:
<h2>Rounds with damaged records</h2>
<p>{{', '.join(map(str, rep.damaged))}}</p>
% end
<h2>Alarms ({{len(rep.alarms)}})</h2>
<table class="list" id="report-alarms">
<tr><th>#</th><th>kind</th><th>alarm</th><th>raised</th><th>acknowledged</th></tr>
% for a in rep.alarms:
<tr data-alarm="{{a.id}}"><td>{{a.id}}</td><td>{{a.kind}}</td><td>{{a.text}}</td><td>{{v.when(a.raised)}}</td><td>{{'open' if a.open else '%s: %s' % (a.ack_user, a.ack_note)}}</td></tr>
% end
</table>
