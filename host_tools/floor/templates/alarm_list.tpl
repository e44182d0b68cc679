% if not alarms:
<p class="quiet" id="no-alarms">No open alarm.</p>
% end
% for a in alarms:
<div class="alarm kind-{{a.kind}}" id="alarm-{{a.id}}" data-alarm="{{a.id}}" data-table="{{a.table_id}}" data-kind="{{a.kind}}">
  <div><b>#{{a.id}}</b> <a href="/table/{{a.table_id}}">{{a.table_id}}</a> <span class="kind">{{a.kind}}</span>
  % if a.round is not None:
  <a href="/table/{{a.table_id}}/round/{{a.round}}">round {{a.round}}</a>
  % end
  <span class="small">{{v.when(a.raised)}}</span></div>
  <div class="text">{{a.text}}</div>
  <form method="post" action="/alarms/{{a.id}}/ack" class="ack">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="next" value="{{path}}">
    <input type="text" name="note" maxlength="500" required placeholder="note: what was found, what was done">
    <button type="submit">Acknowledge</button>
  </form>
</div>
% end
% if alarms.total > len(alarms):
<p class="small" id="alarms-more">The newest {{len(alarms)}} of {{alarms.total}} open alarms{{' of ' + alarms.table if alarms.table else ''}} are shown here; the older come up as these are acknowledged. Every one: <a href="/alarms.csv?state=open{{'&table=' + alarms.table if alarms.table else ''}}">alarms.csv</a>, or <code>sicbo floor alarms --db FILE --open</code>.</p>
% end
