% rebase('base.tpl')
<div id="display">{{!tpl('display_body.tpl', d=d)}}</div>
