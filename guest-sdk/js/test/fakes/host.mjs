import { fakeInterface } from "./recorder.mjs";

export default fakeInterface(
  "host",
  ["log", "notify", "confirm", "requestInput", "progress", "contributeContext", "contributeStatus"],
  { confirm: false, requestInput: null },
);
