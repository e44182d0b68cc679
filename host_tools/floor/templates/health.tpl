% if h.live:
<div id="health" class="health live" role="status" hidden></div>
% else:
<div id="health" class="health health-{{h.level}}" role="status">{{h.text}}</div>
% end
