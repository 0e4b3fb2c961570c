import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("toolsCatalog", ["register", "unregister", "current"], {
  register: (tools) => ({ revision: 1, tools: tools.map((t) => t.name) }),
  unregister: () => ({ revision: 2, tools: [] }),
  current: { revision: 0, tools: [] },
});
