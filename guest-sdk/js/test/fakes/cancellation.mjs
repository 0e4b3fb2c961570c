import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("cancellation", ["isCancelled", "reason", "sleep"], {
  isCancelled: false,
  reason: null,
  sleep: false,
});
