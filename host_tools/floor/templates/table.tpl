% rebase('base.tpl')
<h1>Table {{t.id}}</h1>
% if layout_warning:
<p class="health health-warning" id="layout-warning">{{layout_warning[0].upper() + layout_warning[1:]}}: its rounds' pictures and results display show no winning areas. Give the floor this table's table file (<code>--table-file</code>).</p>
% end
<div class="floor">
<section>
<div class="grid one" id="grid">{{!tpl('tile.tpl', t=t)}}</div>
<p><a href="/table/{{t.id}}/display" id="display-link">Results display</a> (for the screen beside the table)</p>
<h2>Rounds (newest 30)</h2>
<table class="list" id="rounds">
<tr><th>round</th><th>status</th><th>dice</th><th>total</th><th>void</th><th>corrections</th><th>damage</th><th>started</th></tr>
% for rid, status, dice, total, void_reason, corrections, damaged, started in rounds:
<tr data-round="{{rid}}"><td><a href="/table/{{t.id}}/round/{{rid}}">{{rid}}</a></td><td>{{status}}</td><td>{{'-'.join(map(str, v.json.loads(dice))) if dice else ''}}</td><td>{{total if total is not None else ''}}</td><td>{{void_reason or ''}}</td><td>{{corrections or ''}}</td><td>{{'DAMAGED' if damaged else ''}}</td><td>{{v.wall(started)}}</td></tr>
% end
</table>
<h2>Meters: the table's checkpoints against the floor's count</h2>
<p class="small">At each meter checkpoint (J_METERS) the floor counts the table's stored records since the previous one with the firmware's own rule (sicbo.meters); a checkpoint that differs from the count is an alarm. "not counted": a record before it is missing.</p>
<table class="list" id="meters">
<tr><th>seq</th><th>round</th><th>at</th><th>rounds</th><th>paid</th><th>voids</th><th>alarms</th><th>verdict</th></tr>
% for m in meters:
<tr data-seq="{{m.seq}}" data-differs="{{'' if m.differs is None else m.differs}}" class="{{'differs' if m.differs else ''}}"><td>{{m.seq}}</td><td>{{m.round}}</td><td>{{v.wall(m.wall)}}</td>
% cp = m.checkpoint or {}
<td>{{cp.get('rounds', '')}}</td><td>{{cp.get('paid', '')}}</td><td>{{cp.get('voids', '')}}</td><td>{{cp.get('alarms', '')}}</td>
<td>
% if m.differs is None:
not counted
% elif m.differs:
DIFFERS: {{'; '.join('%s table %s, floor %s' % (k, a, b) for k, a, b in m.differences)}}
% else:
agrees
% end
</td></tr>
% end
</table>
<h2>Day reports</h2>
<ul id="days">
% for d in days:
<li><a href="/table/{{t.id}}/report/{{d}}">{{d}}</a> (<a href="/table/{{t.id}}/report/{{d}}.csv">CSV</a>)</li>
% end
</ul>
</section>
<aside class="panel"><h2>Open alarms</h2><div id="alarms">{{!tpl('alarm_list.tpl', alarms=alarms, csrf=csrf, user=user, path='/table/' + t.id)}}</div></aside>
</div>
