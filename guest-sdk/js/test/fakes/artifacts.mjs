import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("artifacts", ["publish"], { publish: "artifact-1" });
