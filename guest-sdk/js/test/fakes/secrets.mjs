import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("secrets", ["get"], { get: "s3cret" });
