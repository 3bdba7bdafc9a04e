/** For each stage, the stages it may move to; every stage is listed, the ends with none. */
export type StageMoves<Stage extends string> = { readonly [From in Stage]: readonly Stage[] }

/** A move the table lacks: a bug in Herald, never the caller's fault, so a plain Error (a 500). */
export class StageMoveRefused extends Error {
  constructor(
    readonly machine: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`A ${machine} can't move from ${from} to ${to}`)
  }
}

/**
 * A row's stages and their legal moves, declared once (as Hydra's flow/flow.go). The stores that write the stage
 * check each move here before the compare-and-set that makes it.
 */
export class StageMachine<Stage extends string> {
  readonly stages: readonly Stage[]

  constructor(
    /** What the rows are, for the refusal's message ("sign-in flow"). */
    readonly name: string,
    private readonly moves: StageMoves<Stage>,
  ) {
    this.stages = Object.keys(moves) as Stage[]
  }

  canMove(from: Stage, to: Stage): boolean {
    return this.moves[from].includes(to)
  }

  assertMove(from: Stage, to: Stage): void {
    if (!this.canMove(from, to)) throw new StageMoveRefused(this.name, from, to)
  }

  /** The stages that may move to `to`: where a bulk move to `to` may start. */
  openStages(to: Stage): Stage[] {
    return this.stages.filter((from) => this.canMove(from, to))
  }
}
