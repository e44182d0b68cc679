% rebase('base.tpl')
<h1>Sign in</h1>
% if error:
<p class="error" id="signin-error">{{error}}</p>
% end
<form method="post" action="/signin" class="signin" id="signin">
  <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="next" value="{{next}}">
  <label>Name <input type="text" name="name" autocomplete="username" required></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<p class="small">Accounts are made on the floor's machine: <code>sicbo floor users add NAME --db FILE</code>.</p>
