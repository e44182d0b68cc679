% for r in rows:
<tr data-audit="{{r.id}}" data-action="{{r.action}}" data-user="{{r.user or ''}}" data-alarm="{{r.alarm_id if r.alarm_id is not None else ''}}"><td>{{r.id}}</td><td>{{v.when(r.at)}}</td><td>{{r.user or '-'}}</td><td class="action">{{r.action}}</td><td>{{r.table_id or ''}}</td><td>{{r.detail}}</td><td>{{r.remote or ''}}</td></tr>
% end
