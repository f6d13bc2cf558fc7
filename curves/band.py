"""The prediction band's stored numbers: parameter covariance over (A, S, ln N*) and its six sigma points."""

from __future__ import annotations

import math

import numpy as np

from curves.model import gradient

# The 3-point Gauss-Hermite rule for a standard normal has nodes 0, +-sqrt(3) and weights 2/3, 1/6, 1/6.
# Along each principal axis the centre node adds nothing to a spread measured about the fitted curve, so the
# parameter variance is the plain mean of the squared deviations at the six off-centre nodes.
SIGMA_POINT_SCALE = math.sqrt(3.0)


def covariance(
    n_b: np.ndarray, theta: np.ndarray, free: list[bool], sigma_fit: float, sd: np.ndarray | None = None
) -> np.ndarray:
    """sigma_fit^2 * pinv(J'J) over the free parameters of (A, S, ln N*); rows and columns of parameters that
    are not free (held by a bound or pinned by a rule) are exactly zero. With per-point `sd` the rows of J
    are divided by it (J'WJ, W = 1/sd^2) and sigma_fit is the dimensionless chi^2/dof scale."""
    mask = np.array(free, dtype=bool)
    cov = np.zeros((3, 3))
    if not mask.any():
        return cov
    jac = np.array([gradient(float(n), theta[0], theta[1], math.exp(theta[2])) for n in n_b])[:, mask]
    if sd is not None:
        jac = jac / np.asarray(sd)[:, None]
    sub = sigma_fit**2 * np.linalg.pinv(jac.T @ jac, rcond=1e-10, hermitian=True)
    cov[np.ix_(mask, mask)] = (sub + sub.T) / 2.0
    return cov


def sigma_points(theta: np.ndarray, cov: np.ndarray) -> list[np.ndarray]:
    """Six points theta +- sqrt(3) * sqrt(lambda_i) * v_i in (A, S, ln N*), over the principal axes of `cov`
    (largest variance first; each axis signed so its largest component is positive, so the output does not
    depend on the sign convention of the eigen solver). A zero-variance axis gives two copies of theta."""
    active = np.flatnonzero(np.any(cov != 0.0, axis=0))
    axes: list[tuple[float, np.ndarray]] = []
    if active.size:
        vals, vecs = np.linalg.eigh(cov[np.ix_(active, active)])
        for k in range(active.size):
            vec = np.zeros(3)
            vec[active] = vecs[:, k]
            if vec[int(np.argmax(np.abs(vec)))] < 0:
                vec = -vec
            axes.append((max(float(vals[k]), 0.0), vec))
    axes.sort(key=lambda a: -a[0])
    while len(axes) < 3:
        axes.append((0.0, np.zeros(3)))
    points = []
    for var, vec in axes:
        step = SIGMA_POINT_SCALE * math.sqrt(var) * vec
        points.extend([theta + step, theta - step])
    return points
