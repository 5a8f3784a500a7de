"""scikit-learn's estimator compatibility suite for every predictor in tcpmodels.predict.

PerPathProbeSVR passes every check. SingleProbeSVR and FormulaThroughputRegressor
reject, by design, input that most checks feed them; those checks are marked as
expected failures below, each with its reason. The code they would exercise is
the same as PerPathProbeSVR's (shared base class) or is tested directly in
test_formula.py.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from tcpmodels.predict import FormulaThroughputRegressor, PerPathProbeSVR, SingleProbeSVR

# Checks that fit on X with more than one column (SingleProbeSVR takes exactly one,
# the probe throughput) or with columns other than (rtt_s, loss_rate[, t0_s, w_max_segments])
# and values outside the formula's domain (negative RTT, loss rate > 1).
_MULTI_COLUMN_CHECKS = [
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_regressors_train",
    "check_regressor_data_not_an_array",
    "check_regressors_no_decision_function",
    "check_supervised_y_2d",
    "check_regressors_int",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
]


def _expected_failures(estimator) -> dict[str, str]:
    if isinstance(estimator, SingleProbeSVR):
        reason = ("fits X with several columns; SingleProbeSVR accepts exactly one (the probe "
                  "throughput) and raises ValueError; the shared code passes these checks in PerPathProbeSVR")
        return {name: reason for name in _MULTI_COLUMN_CHECKS}
    if isinstance(estimator, FormulaThroughputRegressor):
        reason = ("feeds X whose columns are not (rtt_s, loss_rate[, t0_s, w_max_segments]) or hold "
                  "negative RTTs / loss rates > 1, which raise ValueError by design")
        failures = {name: reason for name in _MULTI_COLUMN_CHECKS}
        failures["check_requires_y_none"] = reason
        return failures
    return {}


@parametrize_with_checks(
    [PerPathProbeSVR(), SingleProbeSVR(), FormulaThroughputRegressor(capacity_bps=1e9)],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
