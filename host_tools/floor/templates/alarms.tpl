% rebase('base.tpl')
<h1>Alarms</h1>
<p>Every alarm, tamper, violation, hold, damage, fault and link gap stays open until a signed-in staff member acknowledges it with a note.
% if not user:
<b>Sign in to acknowledge.</b>
% end
</p>
<h2>Open</h2>
<div id="alarms">{{!tpl('alarm_list.tpl', alarms=alarms, csrf=csrf, user=user, path='/alarms')}}</div>
<h2>Acknowledged</h2>
<p class="small" id="acked-count">{{done_total}} acknowledged{{'; these are below alarm %d' % before if before is not None else ''}}. <a href="/alarms.csv">CSV of every alarm</a> (open and acknowledged, with who acknowledged it, when, and the note){{!' &middot; <a href="/alarms">the newest</a>' if before is not None else ''}}</p>
<table class="list" id="acknowledged">
<tr><th>#</th><th>table</th><th>kind</th><th>alarm</th><th>raised</th><th>acknowledged by</th><th>at</th><th>note</th></tr>
% for a in done:
<tr data-alarm="{{a.id}}"><td>{{a.id}}</td><td>{{a.table_id}}</td><td>{{a.kind}}</td><td>{{a.text}}</td><td>{{v.when(a.raised)}}</td><td>{{a.ack_user}}</td><td>{{v.when(a.ack_at)}}</td><td>{{a.ack_note}}</td></tr>
% end
</table>
% if older:
<p id="acked-more"><a id="acked-older" href="{{older}}">Older acknowledged alarms</a></p>
% end
