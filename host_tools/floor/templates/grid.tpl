% rebase('base.tpl')
<section class="summary" id="summary">{{!tpl('summary.tpl', summary=summary)}}</section>
<div class="floor">
<section class="grid" id="grid">
% for t in tiles:
{{!tpl('tile.tpl', t=t)}}
% end
</section>
<aside class="panel"><h2>Open alarms</h2><div id="alarms">{{!tpl('alarm_list.tpl', alarms=alarms, csrf=csrf, user=user, path='/')}}</div></aside>
</div>
