% rebase('base.tpl')
<h1>Alarms</h1>
<p>Every alarm, tamper, violation, hold, damage, fault and link gap stays open until a signed-in staff member acknowledges it with a note.
% if not user:
<b>Sign in to acknowledge.</b>
% end
</p>
<h2>Open</h2>
<div id="alarms">{{!tpl('alarm_list.tpl', alarms=alarms, csrf=csrf, user=user, path='/alarms')}}</div>
<h2>Acknowledged (newest 100)</h2>
<table class="list" id="acknowledged">
<tr><th>#</th><th>table</th><th>kind</th><th>alarm</th><th>raised</th><th>acknowledged by</th><th>at</th><th>note</th></tr>
% for a in done:
<tr data-alarm="{{a.id}}"><td>{{a.id}}</td><td>{{a.table_id}}</td><td>{{a.kind}}</td><td>{{a.text}}</td><td>{{v.when(a.raised)}}</td><td>{{a.ack_user}}</td><td>{{v.when(a.ack_at)}}</td><td>{{a.ack_note}}</td></tr>
% end
</table>
